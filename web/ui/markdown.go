//go:build js && wasm

package ui

import (
	"syscall/js"

	"github.com/floehq/floe/playground/markdown"
)

// The DOM of rendered Markdown is built node by node from the tree of
// markdown.Render: createElement with a tag from the allowlist,
// createTextNode for text, setAttribute for the allowed attributes. No
// HTML string is ever parsed, so model text cannot become markup.
var mdTags = map[string]bool{
	"p": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "ul": true, "ol": true,
	"li": true, "blockquote": true, "pre": true, "code": true, "em": true, "strong": true, "del": true, "a": true,
	"br": true, "hr": true, "table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "span": true,
}

var mdAttrs = map[string]bool{"href": true, "target": true, "rel": true, "class": true, "start": true, "data-lang": true}

// mdNodes appends the elements of nodes to parent. A block of a reply's
// top level (a paragraph, a list, a quote, a table) takes its direction
// from its own text (dir="auto"), the blocks in it from it: a reply may
// mix paragraphs of Arabic or Hebrew with ones of English. A code block
// is left to right.
func (a *App) mdNodes(parent js.Value, nodes []*markdown.Node, top bool) {
	for _, n := range nodes {
		if n.Tag == "" {
			parent.Call("append", a.doc.Call("createTextNode", n.Text))
			continue
		}
		tag := n.Tag
		if !mdTags[tag] {
			tag = "span"
		}
		e := a.doc.Call("createElement", tag)
		for _, at := range n.Attrs {
			if mdAttrs[at[0]] {
				e.Call("setAttribute", at[0], at[1])
			}
		}
		if tag == "pre" {
			e.Call("setAttribute", "dir", "ltr")
		} else if top {
			e.Call("setAttribute", "dir", "auto")
		}
		a.mdNodes(e, n.Kids, false)
		if tag == "pre" {
			box := a.doc.Call("createElement", "div")
			box.Call("setAttribute", "class", "codeblock")
			box.Call("append", a.button("copy small", "Copy", "data-action", "copy", "aria-label", "Copy the code").Underlying())
			box.Call("append", e)
			e = box
		}
		parent.Call("append", e)
	}
}

// copyText puts s on the clipboard, when the page may.
func copyText(s string) {
	cb := js.Global().Get("navigator").Get("clipboard")
	if cb.Truthy() {
		p := cb.Call("writeText", s)
		p.Call("catch", js.FuncOf(func(js.Value, []js.Value) any { return nil }))
	}
}
