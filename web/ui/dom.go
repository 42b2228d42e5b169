//go:build js && wasm

package ui

import (
	"errors"
	"syscall/js"

	"honnef.co/go/js/dom/v2"
)

// elem is the element type the page works with. Methods are called on this
// concrete type rather than on the dom.Element interface: every interface
// method in use makes the linker keep a wrapper for each of dom/v2's ~70
// element types, which about doubled the size of playground.wasm.
type elem = *dom.BasicHTMLElement

// wrap turns a js.Value holding an element into an elem; nil for null.
func wrap(v js.Value) elem {
	if v.IsNull() || v.IsUndefined() {
		return nil
	}
	return &dom.BasicHTMLElement{BasicElement: &dom.BasicElement{BasicNode: &dom.BasicNode{Value: v}}}
}

// el creates an element with a class and text content.
func (a *App) el(tag, class, text string) elem {
	e := wrap(a.doc.Call("createElement", tag))
	if class != "" {
		e.SetAttribute("class", class)
	}
	if text != "" {
		e.SetTextContent(text)
	}
	return e
}

// byID returns the element with id, or panics naming the id: the page and
// this package must agree on the skeleton.
func byID(doc js.Value, id string) elem {
	e := wrap(doc.Call("getElementById", id))
	if e == nil {
		panic("playground page: no element #" + id)
	}
	return e
}

// toggle sets or clears a class.
func toggle(e elem, class string, on bool) {
	if on {
		e.Class().Add(class)
	} else {
		e.Class().Remove(class)
	}
}

// show sets the hidden attribute.
func show(e elem, on bool) {
	if on {
		e.RemoveAttribute("hidden")
	} else {
		e.SetAttribute("hidden", "")
	}
}

func setDisabled(e elem, on bool) {
	if on {
		e.SetAttribute("disabled", "")
	} else {
		e.RemoveAttribute("disabled")
	}
}

// focusIn returns the element of root that has the focus; nil when the
// focus is elsewhere.
func (a *App) focusIn(root elem) elem {
	act := wrap(a.doc.Get("activeElement"))
	if act == nil || !root.Call("contains", act.Underlying()).Bool() {
		return nil
	}
	return act
}

// refocus gives the focus to the first element shown that one of sels
// names in root, or to the prompt when none is: called when root was
// drawn anew under the focus (the button pressed replaced by its new
// self, or hidden), which would leave it on the page's body.
func (a *App) refocus(root elem, sels ...string) {
	for _, s := range sels {
		if s == "" {
			continue
		}
		if e := wrap(root.Call("querySelector", s)); e != nil && e.Call("getClientRects").Length() > 0 {
			e.Focus()
			return
		}
	}
	a.prompt.Focus()
}

// attrIs is the selector of the elements whose attribute name is value.
func attrIs(name, value string) string {
	return "[" + name + `="` + js.Global().Get("CSS").Call("escape", value).String() + `"]`
}

func consoleError(s string) { js.Global().Get("console").Call("error", s) }

func consoleWarn(s string) { js.Global().Get("console").Call("warn", s) }

// Keys of the page's local storage.
const (
	keyCurrent  = "floe-playground:current"  // the session shown last
	keyTitles   = "floe-playground:titles"   // session titles the user gave, by id (JSON)
	keySettings = "floe-playground:settings" // Settings (JSON)
	keyImported = "floe-playground:imported" // imported sessions' last records' times, by id (JSON)
	keyDemo     = "floe-playground:demo"     // the demo script loaded in Settings (JSON: name, text)
)

func localStorage() js.Value { return js.Global().Get("localStorage") }

func localGet(key string) string {
	ls := localStorage()
	if !ls.Truthy() {
		return ""
	}
	v := ls.Call("getItem", key)
	if v.Type() != js.TypeString {
		return ""
	}
	return v.String()
}

// localSet keeps value under key in local storage; the error says why
// the browser refused it (its local storage full), never a panic.
func localSet(key, value string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(js.Error); ok {
				err = errors.New("this browser's local storage refused to keep it: " + e.Get("message").String())
				return
			}
			panic(p)
		}
	}()
	ls := localStorage()
	if !ls.Truthy() {
		return errors.New("this browser gives the page no local storage to keep it in")
	}
	ls.Call("setItem", key, value)
	return nil
}

// parseJSON parses s with JSON.parse; undefined when s is not JSON.
func parseJSON(s string) (v js.Value) {
	if s == "" {
		return js.Undefined()
	}
	defer func() {
		if recover() != nil {
			v = js.Undefined()
		}
	}()
	return js.Global().Get("JSON").Call("parse", s)
}

func stringifyJSON(v js.Value) string { return js.Global().Get("JSON").Call("stringify", v).String() }
