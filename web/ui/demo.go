//go:build js && wasm

package ui

import (
	"context"
	"fmt"
	"syscall/js"

	"github.com/floehq/floe/playground"
	"github.com/floehq/floe/web/jsx"
	"github.com/norunners/vert"
	"honnef.co/go/js/dom/v2"
)

// storedDemo is the demo script loaded in Settings, as local storage
// keeps it: the file's name and text.
type storedDemo struct {
	Name string `js:"name"`
	Text string `js:"text"`
}

// loadDemo reads the demo script local storage keeps. One refused now
// (a file the page took before its rules changed) is said in Settings
// and the console, and not used.
func (a *App) loadDemo() {
	v := parseJSON(localGet(keyDemo))
	if v.Type() != js.TypeObject {
		return
	}
	var s storedDemo
	if err := vert.ValueOf(v).AssignTo(&s); err != nil {
		consoleWarn("stored demo script ignored: " + err.Error())
		return
	}
	d, err := playground.ParseDemo([]byte(s.Text))
	a.demoName = s.Name
	if err != nil {
		a.demoErr = err.Error()
		consoleWarn("the stored demo script " + s.Name + " is refused: " + err.Error())
		return
	}
	a.demo = d
}

// demoStatus says in Settings which demo script the scripted demo uses.
func (a *App) demoStatus() string {
	switch {
	case a.demo != nil:
		return fmt.Sprintf("Loaded: %s, %d rule(s).", a.demoName, len(a.demo.Rules))
	case a.demoErr != "":
		return "The demo script kept in this browser (" + a.demoName + ") is refused: " + a.demoErr + ". Load it again once fixed, or clear it."
	}
	return "None: the scripted demo answers from its own script."
}

func (a *App) listenDemo() {
	in := byID(a.doc, "set-demo-file")
	in.AddEventListener("change", false, func(dom.Event) {
		files := in.Get("files")
		if files.Length() == 0 {
			return
		}
		f := files.Index(0)
		in.Set("value", "")
		name, size := f.Get("name").String(), f.Get("size").Float()
		if size > playground.MaxDemoBytes {
			err := fmt.Errorf("%s: the demo script is %.0f bytes; at most %d (1 MiB)", name, size, playground.MaxDemoBytes)
			a.post(func() { showFieldError(a, "set-demo-file", err) })
			return
		}
		a.spawn(func() {
			t, err := jsx.AwaitCall(context.Background(), f, "text")
			var d *playground.Demo
			text := ""
			if err == nil {
				text = t.String()
				d, err = playground.ParseDemo([]byte(text))
			}
			if err == nil {
				err = localSet(keyDemo, stringifyJSON(vert.ValueOf(storedDemo{Name: name, Text: text}).JSValue()))
			}
			a.post(func() {
				if err != nil {
					showFieldError(a, "set-demo-file", fmt.Errorf("%s: %w", name, err))
					return
				}
				a.demo, a.demoName, a.demoErr = d, name, ""
				a.demoChanged(fmt.Sprintf("Demo script %s loaded (%d rule(s)).", name, len(d.Rules)))
			})
		})
	})
	byID(a.doc, "set-demo-clear").AddEventListener("click", false, func(dom.Event) {
		a.post(func() {
			if a.demo == nil && a.demoErr == "" {
				return
			}
			localRemove(keyDemo)
			a.demo, a.demoName, a.demoErr = nil, "", ""
			a.demoChanged("Demo script cleared.")
		})
	})
}

// demoChanged shows the demo script's status in Settings and applies it:
// at once when the session shown is empty (a new session), else from the
// next new session on, as Settings do.
func (a *App) demoChanged(note string) {
	byID(a.doc, "set-demo-status").SetTextContent(a.demoStatus())
	badField(a, "set-demo-file", nil)
	if !a.running && !a.isRemote() && (a.tr == nil || len(a.tr.Items) == 0) {
		a.newSession(note)
	} else {
		a.note = note + " It applies to the next new session."
	}
}

func localRemove(key string) {
	if ls := localStorage(); ls.Truthy() {
		ls.Call("removeItem", key)
	}
}
