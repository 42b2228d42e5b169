//go:build js && wasm

// Package ui is the playground page: it renders the engine's ordered stream
// with honnef.co/go/js/dom/v2 — bubbles for thinking and text, tool cards
// paired by tool_call_id with their approval buttons, request dividers with
// token usage — next to the raw stream, and wires the prompt, Stop and steer
// controls to a [playground.Runner].
//
// # One goroutine owns the DOM
//
// Every DOM access happens in functions run by a [playground.Loop] on the
// goroutine that calls [App.Run]. Engine output, approval requests and DOM
// event callbacks only post to the loop; event callbacks never block. After
// each batch of posted work the loop renders the items that changed, so a
// burst of deltas costs one DOM update per item.
//
// The page's HTML (static/index.html) provides the skeleton this package
// looks up by id; see [New].
package ui
