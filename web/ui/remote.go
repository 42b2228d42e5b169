//go:build js && wasm

package ui

import (
	"strings"
	"syscall/js"
	"time"

	"github.com/floehq/floe/engine/omni"
	"github.com/floehq/floe/playground"
)

// A remote session is hosted by a Floe server and followed through the
// page's JavaScript client (connect.mjs). The page hands the App a handle
// with follow(onMessage), run(text, input, approve, end), steer(text,
// images), abort(), retryNow() and close(); every message arrives as
// OmniMessage JSON and goes through the same rendering as a local run's.
// A task's input is its text, or, with images, the JSON of its messages
// (input; "" for text only).

// exposeRemote publishes floePlayground.attachRemote(handle, id, label) for
// the page's script.
func (a *App) exposeRemote() {
	obj := js.Global().Get("Object").New()
	obj.Set("attachRemote", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) < 3 || args[0].Type() != js.TypeObject || args[1].Type() != js.TypeString {
			consoleError("floePlayground.attachRemote: want (handle, sessionId, label)")
			return nil
		}
		h, id, label := args[0], args[1].String(), args[2].String()
		a.post(func() { a.attachRemote(h, id, label) })
		return nil
	}))
	js.Global().Set("floePlayground", obj)
}

func (a *App) isRemote() bool { return a.remote.Truthy() }

// detachRemote closes the remote session shown, if any.
func (a *App) detachRemote() {
	if a.isRemote() {
		a.remote.Call("close")
		a.remote = js.Undefined()
	}
}

func (a *App) attachRemote(h js.Value, id, label string) {
	if a.running && !a.isRemote() {
		a.note = "Stop the run in flight before attaching to a remote session."
		h.Call("close")
		return
	}
	a.detachRemote()
	if old := a.bat; old != nil {
		a.retire(a.sessID, old)
	}
	a.gen++
	gen := a.gen
	a.runner, a.bat, a.sessID = nil, nil, id
	a.sysPrompt, a.noImages, a.atts.dirty = "", false, true // the server's model
	a.resetView(&playground.Transcript{Now: time.Now})
	a.running, a.stop, a.compacting = false, false, false
	a.remote = h
	a.drawer = "" // the form is in the sessions drawer, the session behind it
	a.sessionIDEl.SetTextContent(id)
	a.modelLabel.SetTextContent(label)
	show(a.intro, false)
	h.Call("follow", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) == 0 || args[0].Type() != js.TypeString {
			return nil
		}
		s := args[0].String()
		a.post(func() {
			if a.gen != gen {
				return
			}
			var m omni.Message
			if err := m.UnmarshalJSON([]byte(s)); err != nil {
				consoleWarn("remote session: a message that is not an OmniMessage: " + err.Error())
				return
			}
			a.apply(m)
		})
		return nil
	}))
}

// startRemote starts a task of text and images on the remote session;
// approval requests are asked on the page like a local run's.
func (a *App) startRemote(text string, images []string) {
	input := ""
	if len(images) > 0 {
		in, err := playground.RemoteTask(text, images)
		if err != nil {
			a.note = strings.ToUpper(err.Error()[:1]) + err.Error()[1:] + "."
			return
		}
		input = in
	}
	atts := a.atts.take()
	gen := a.gen
	var approve, end js.Func
	approve = js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) < 2 || args[0].Type() != js.TypeString {
			return nil
		}
		s, resolve := args[0].String(), args[1]
		a.post(func() {
			var call omni.Message
			if err := call.UnmarshalJSON([]byte(s)); err != nil {
				resolve.Invoke(omni.DecisionDeny)
				return
			}
			a.askApproval(gen, call, func(d string) { resolve.Invoke(d) })
		})
		return nil
	})
	end = js.FuncOf(func(_ js.Value, args []js.Value) any {
		problem, started := "", true
		if len(args) > 0 && args[0].Type() == js.TypeString {
			problem = args[0].String()
		}
		if len(args) > 1 && args[1].Type() == js.TypeBoolean {
			started = args[1].Bool()
		}
		approve.Release()
		end.Release()
		a.post(func() { a.remoteEnded(gen, text, atts, problem, started) })
		return nil
	})
	a.remote.Call("run", text, input, approve, end)
	a.prompt.SetValue("")
	a.running, a.stop, a.note = true, false, ""
	a.cancelled = map[string]bool{}
}

// remoteEnded ends a remote run. A failure is a note saying what to check
// (the next send clears it), not a page error: the server may be down or
// busy with another client's task. A prompt the server did not take goes
// back to the composer, and its images, unless the user has typed
// something else there or attached others.
func (a *App) remoteEnded(gen int, text string, atts []*attachment, problem string, started bool) {
	a.runEnded(gen, nil)
	if gen != a.gen || problem == "" {
		return
	}
	if started {
		a.note = "The remote task ended early: " + problem
		return
	}
	a.note = "Not sent: " + problem
	if strings.TrimSpace(a.prompt.Value()) == "" {
		a.prompt.SetValue(text)
	}
	if len(atts) > 0 {
		a.atts.restore(atts)
	}
}
