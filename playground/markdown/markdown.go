// Package markdown renders a model's Markdown (CommonMark with GitHub's
// tables, strikethrough and autolinks, through goldmark) into a tree of
// safe nodes that the playground's view builds DOM from, and cuts a
// streaming text at block boundaries so that only its last block is
// rendered again as it grows ([Doc]). It is apart from package playground
// so that the session server and the Worker, which run the playground's
// scripted model and workspace, link no Markdown parser.
package markdown

import (
	"bufio"
	"bytes"
	"net/url"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Node is one node of rendered Markdown: an element (Tag set) with
// attributes and children, or a text node (Tag ""). It is what a view turns
// into DOM nodes one by one, never into an HTML string. Tags come only from
// a fixed set (p, h1–h6, ul, ol, li, blockquote, pre, code, em, strong, del,
// a, br, hr, table, thead, tbody, tr, th, td, span); attributes only from
// href (http, https or mailto, absolute), target, rel, class, start and
// data-lang. Raw HTML of the source is shown as text; images are shown as
// links to them, never loaded.
type Node struct {
	Tag   string
	Text  string
	Attrs [][2]string
	Kids  []*Node
}

// Attr returns the value of attribute name, or "".
func (n *Node) Attr(name string) string {
	for _, a := range n.Attrs {
		if a[0] == name {
			return a[1]
		}
	}
	return ""
}

// TextContent is the concatenated text of n and its descendants.
func (n *Node) TextContent() string {
	var b strings.Builder
	var walk func(*Node)
	walk = func(n *Node) {
		b.WriteString(n.Text)
		for _, k := range n.Kids {
			walk(k)
		}
	}
	walk(n)
	return b.String()
}

// md is goldmark with GFM's extensions, its tables bounded (tableFill).
var md = goldmark.New(
	goldmark.WithExtensions(extension.Linkify, extension.Strikethrough, extension.TaskList),
	goldmark.WithParserOptions(
		parser.WithParagraphTransformers(util.Prioritized(boundedTable{extension.NewTableParagraphTransformer()}, 200)),
		parser.WithASTTransformers(util.Prioritized(extension.NewTableASTTransformer(), 0)),
	),
)

// maxTableFill is the most empty cells a table's short rows are filled
// with. GFM fills each row to the header's width: a header of n columns
// over n rows of "|" is n² cells, and 8,000 of each (24 KB) took goldmark
// over a minute.
const maxTableFill = 10000

// boundedTable is goldmark's table transformer for the paragraphs whose
// table takes at most maxTableFill empty cells; a paragraph that would
// take more stays a paragraph, shown as its text.
type boundedTable struct{ parser.ParagraphTransformer }

func (b boundedTable) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	if tableFill(node.Lines(), reader.Source()) <= maxTableFill {
		b.ParagraphTransformer.Transform(node, reader, pc)
	}
}

// tableFill returns the number of empty cells goldmark's table
// transformer adds to the table it makes of lines, by its rules: the
// first delimiter row makes a table when the row before has as many cells,
// and each row after is filled to that width.
func tableFill(lines *text.Segments, src []byte) int {
	line := func(i int) []byte {
		s := lines.At(i)
		return s.Value(src)
	}
	for i := 1; i < lines.Len(); i++ {
		cols := delimCols(line(i))
		if cols == 0 {
			continue
		}
		if rowCells(line(i-1), -1) != cols {
			return 0
		}
		fill := 0
		for j := i + 1; j < lines.Len(); j++ {
			fill += cols - rowCells(line(j), cols)
		}
		return fill
	}
	return 0
}

// delimCols returns the number of columns of a table's delimiter row
// (|:--|--:|), or 0 when line is none.
func delimCols(line []byte) int {
	if w, _ := util.IndentWidth(line, 0); w > 3 {
		return 0
	}
	dashesOnly := true
	for _, c := range line {
		if c != '-' {
			dashesOnly = false
		}
		if !util.IsSpace(c) && c != '-' && c != '|' && c != ':' {
			return 0
		}
	}
	if dashesOnly {
		return 0
	}
	cols := bytes.Split(line, []byte{'|'})
	if util.IsBlank(cols[0]) {
		cols = cols[1:]
	}
	if len(cols) > 0 && util.IsBlank(cols[len(cols)-1]) {
		cols = cols[:len(cols)-1]
	}
	for _, col := range cols {
		// One of -, :-, -: and :-: (one dash or more), spaces around.
		col = bytes.Trim(col, " \t\n\f\r")
		col = bytes.TrimPrefix(col, []byte(":"))
		col = bytes.TrimSuffix(col, []byte(":"))
		if len(col) == 0 || len(bytes.Trim(col, "-")) > 0 {
			return 0
		}
	}
	return len(cols)
}

// rowCells returns the number of cells of a table row, at most limit
// when limit >= 0: cells are split at pipes not after a backslash, a
// leading and a trailing pipe split nothing.
func rowCells(line []byte, limit int) int {
	line = util.TrimRightSpace(util.TrimLeftSpace(line))
	if len(line) > 0 && line[len(line)-1] == '|' {
		line = line[:len(line)-1]
	}
	pos := 0
	if len(line) > 0 && line[0] == '|' {
		pos = 1
	}
	n := 0
	for ; pos < len(line); n++ {
		if n == limit {
			return n
		}
		end := pos
		for end < len(line) && !(line[end] == '|' && (end == 0 || line[end-1] != '\\')) {
			end++
		}
		pos = end + 1
	}
	return n
}

// Render parses src and returns its top-level blocks.
func Render(src string) []*Node {
	b := []byte(src)
	return convert(md.Parser().Parse(text.NewReader(b)), b)
}

// convert returns the top-level blocks of doc, parsed from src.
func convert(doc ast.Node, src []byte) []*Node {
	c := converter{src: src}
	return c.kids(doc)
}

// SafeURL returns the normalized form of a link destination when it is an
// absolute http, https or mailto URL, else "".
func SafeURL(dest string) string {
	dest = strings.TrimSpace(dest)
	u, err := url.Parse(dest)
	if err != nil || u.Opaque == "" && u.Host == "" && u.Scheme != "mailto" {
		return ""
	}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return ""
		}
	case "mailto":
		if u.Opaque == "" {
			return ""
		}
	default:
		return ""
	}
	return u.String()
}

// maxDepth is how many quotes, lists, items and emphases nest: past it
// their content is drawn in the element they are in (a list item's
// followed by a line break). Chromium's tab crashed laying out a few
// thousand nested elements.
const maxDepth = 64

type converter struct {
	src   []byte
	depth int // of the node whose kids are converted
}

// flat reports whether a container at the current depth is drawn flat.
func (c *converter) flat() bool { return c.depth >= maxDepth }

func el(tag string, kids ...*Node) *Node { return &Node{Tag: tag, Kids: kids} }
func txt(s string) *Node                 { return &Node{Text: s} }

func (c *converter) kids(n ast.Node) []*Node {
	c.depth++
	defer func() { c.depth-- }()
	var out []*Node
	for k := n.FirstChild(); k != nil; k = k.NextSibling() {
		out = append(out, c.node(k)...)
	}
	return out
}

func (c *converter) lines(n ast.Node) string {
	var b bytes.Buffer
	ls := n.Lines()
	for i := 0; i < ls.Len(); i++ {
		s := ls.At(i)
		b.Write(s.Value(c.src))
	}
	return b.String()
}

// unescape resolves backslash escapes and character references in one
// pass, as goldmark's HTML renderer writes text (and U+0000 as U+FFFD):
// an escaped & starts no reference, and what a reference gives is not
// read again ("&#38;lt;" is "&lt;"). The renderer's writer does it, and its
// four HTML escapes are taken back.
func unescape(b []byte) string {
	if bytes.IndexAny(b, "\\&\x00") < 0 {
		return string(b)
	}
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	html.DefaultWriter.Write(w, b)
	w.Flush()
	return unescapeHTML.Replace(out.String())
}

var unescapeHTML = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`)

func (c *converter) node(n ast.Node) []*Node {
	switch n := n.(type) {
	case *ast.Paragraph:
		return []*Node{el("p", c.kids(n)...)}
	case *ast.TextBlock:
		return c.kids(n)
	case *ast.Heading:
		lvl := min(max(n.Level, 1), 6)
		return []*Node{el("h"+strconv.Itoa(lvl), c.kids(n)...)}
	case *ast.ThematicBreak:
		return []*Node{el("hr")}
	case *ast.Blockquote:
		if c.flat() {
			return c.kids(n)
		}
		return []*Node{el("blockquote", c.kids(n)...)}
	case *ast.List:
		if c.flat() {
			return c.kids(n)
		}
		if n.IsOrdered() {
			l := el("ol", c.kids(n)...)
			if n.Start != 1 {
				l.Attrs = append(l.Attrs, [2]string{"start", strconv.Itoa(n.Start)})
			}
			return []*Node{l}
		}
		return []*Node{el("ul", c.kids(n)...)}
	case *ast.ListItem:
		if c.flat() {
			return append(c.kids(n), el("br"))
		}
		return []*Node{el("li", c.kids(n)...)}
	case *ast.CodeBlock:
		return []*Node{codeBlock(c.lines(n), "")}
	case *ast.FencedCodeBlock:
		lang := ""
		if n.Info != nil {
			lang = unescape(n.Language(c.src))
		}
		return []*Node{codeBlock(c.lines(n), lang)}
	case *ast.LinkReferenceDefinition:
		return nil // its links carry its destination
	case *ast.HTMLBlock:
		s := c.lines(n)
		if n.HasClosure() {
			s += string(n.ClosureLine.Value(c.src))
		}
		return []*Node{el("p", txt(strings.TrimRight(s, "\n")))}
	case *ast.Text:
		out := []*Node{txt(unescape(n.Segment.Value(c.src)))}
		if n.IsRaw() {
			out[0].Text = string(n.Segment.Value(c.src))
		}
		switch {
		case n.HardLineBreak():
			out = append(out, el("br"))
		case n.SoftLineBreak():
			out = append(out, txt("\n"))
		}
		return out
	case *ast.String:
		return []*Node{txt(string(n.Value))}
	case *ast.CodeSpan:
		var b strings.Builder
		for k := n.FirstChild(); k != nil; k = k.NextSibling() {
			if t, ok := k.(*ast.Text); ok {
				v := t.Segment.Value(c.src)
				if bytes.HasSuffix(v, []byte("\n")) {
					v = append(v[:len(v)-1:len(v)-1], ' ')
				}
				b.Write(v)
			} else if s, ok := k.(*ast.String); ok {
				b.Write(s.Value)
			}
		}
		return []*Node{el("code", txt(b.String()))}
	case *ast.Emphasis:
		if c.flat() {
			return c.kids(n)
		}
		tag := "em"
		if n.Level >= 2 {
			tag = "strong"
		}
		return []*Node{el(tag, c.kids(n)...)}
	case *ast.Link:
		return []*Node{link(unescape(n.Destination), c.kids(n))}
	case *ast.AutoLink:
		u := string(n.URL(c.src))
		label := string(n.Label(c.src))
		if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(u), "mailto:") {
			u = "mailto:" + u
		}
		return []*Node{link(u, []*Node{txt(label)})}
	case *ast.Image:
		alt := (&Node{Kids: c.kids(n)}).TextContent()
		if alt == "" {
			alt = "image"
		}
		return []*Node{link(unescape(n.Destination), []*Node{txt("[image: " + alt + "]")})}
	case *ast.RawHTML:
		var b strings.Builder
		for i := 0; i < n.Segments.Len(); i++ {
			s := n.Segments.At(i)
			b.Write(s.Value(c.src))
		}
		return []*Node{txt(b.String())}
	case *east.Strikethrough:
		if c.flat() {
			return c.kids(n)
		}
		return []*Node{el("del", c.kids(n)...)}
	case *east.TaskCheckBox:
		if n.IsChecked {
			return []*Node{txt("☑ ")}
		}
		return []*Node{txt("☐ ")}
	case *east.Table:
		t := el("table")
		var body *Node
		for k := n.FirstChild(); k != nil; k = k.NextSibling() {
			switch k.(type) {
			case *east.TableHeader:
				t.Kids = append(t.Kids, el("thead", el("tr", c.cells(k, "th")...)))
			case *east.TableRow:
				if body == nil {
					body = el("tbody")
					t.Kids = append(t.Kids, body)
				}
				body.Kids = append(body.Kids, el("tr", c.cells(k, "td")...))
			}
		}
		return []*Node{t}
	}
	// Anything else (extensions not enabled): its text, so nothing is lost.
	if n.Type() == ast.TypeBlock {
		if n.HasChildren() {
			return []*Node{el("p", c.kids(n)...)}
		}
		return []*Node{el("p", txt(c.lines(n)))}
	}
	return c.kids(n)
}

func (c *converter) cells(row ast.Node, tag string) []*Node {
	var out []*Node
	for k := row.FirstChild(); k != nil; k = k.NextSibling() {
		cell := el(tag, c.kids(k)...)
		if tc, ok := k.(*east.TableCell); ok && tc.Alignment != east.AlignNone {
			cell.Attrs = append(cell.Attrs, [2]string{"class", "align-" + tc.Alignment.String()}) // |:--|--:|
		}
		out = append(out, cell)
	}
	return out
}

func codeBlock(body, lang string) *Node {
	code := el("code", txt(body))
	pre := el("pre", code)
	if lang = cleanLang(lang); lang != "" {
		code.Attrs = [][2]string{{"class", "language-" + lang}}
		pre.Attrs = [][2]string{{"data-lang", lang}}
	}
	return pre
}

// cleanLang keeps a fence's language name when it is a plain word.
func cleanLang(s string) string {
	if len(s) > 32 {
		return ""
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '+' || r == '#' || r == '.') {
			return ""
		}
	}
	return s
}

// link is an anchor for a safe destination; otherwise the label alone, in
// a span of class link-refused (the destination is not shown).
func link(dest string, label []*Node) *Node {
	u := SafeURL(dest)
	if u == "" {
		s := el("span", label...)
		s.Attrs = [][2]string{{"class", "link-refused"}}
		return s
	}
	a := el("a", label...)
	a.Attrs = [][2]string{{"href", u}, {"target", "_blank"}, {"rel", "noopener noreferrer"}}
	return a
}

// Chunk is a run of top-level Markdown blocks rendered together: the
// source's bytes [Start, End).
type Chunk struct {
	Start, End int
	Nodes      []*Node
}

// Doc renders a source that grows by appends, as streamed text
// does, rebuilding only its last chunk. The source is cut into chunks at
// lines that start a new top-level block after a blank line and cannot
// belong to the block before (not indented, not a list item, not inside a
// fenced code block or a raw HTML block that spans blank lines), where a
// parse starts a top-level block too; text appended later cannot change
// a chunk before the last one. The final
// render parses the whole source once, so that what depends on the whole
// document (link reference definitions) comes out as a full parse gives it.
type Doc struct {
	src    string
	chunks []Chunk
	final  bool
}

// Update sets the source. It returns keep, the number of leading chunks
// whose rendering stands, and the chunks that replace the rest. final
// marks the complete message. A source that does not extend the previous
// one is rendered from scratch.
func (d *Doc) Update(src string, final bool) (keep int, fresh []Chunk) {
	if final || d.final || !strings.HasPrefix(src, d.src) {
		d.src, d.final = src, final
		d.chunks = []Chunk{{0, len(src), Render(src)}}
		return 0, d.chunks
	}
	if src == d.src && len(d.chunks) > 0 {
		return len(d.chunks), nil
	}
	start := 0
	if n := len(d.chunks); n > 0 {
		start = d.chunks[n-1].Start
		d.chunks = d.chunks[:n-1]
	}
	keep = len(d.chunks)
	// A cut stands where a parse of the rest starts a top-level block
	// (CutPoints' scan of the lines does not know a fence in a list item
	// from one at the top level); with no cut, that parse is the chunk's.
	rest := []byte(src[start:])
	doc := md.Parser().Parse(text.NewReader(rest))
	bounds := []int{start}
	if cuts := CutPoints(src, start); len(cuts) > 0 {
		blocks := map[int]bool{}
		for k := doc.FirstChild(); k != nil; k = k.NextSibling() {
			blocks[start+k.Pos()] = true
		}
		for _, c := range cuts {
			if blocks[c] {
				bounds = append(bounds, c)
			}
		}
	}
	bounds = append(bounds, len(src))
	if len(bounds) == 2 {
		d.chunks = append(d.chunks, Chunk{start, len(src), convert(doc, rest)})
	} else {
		for i := 0; i+1 < len(bounds); i++ {
			d.chunks = append(d.chunks, Chunk{bounds[i], bounds[i+1], Render(src[bounds[i]:bounds[i+1]])})
		}
	}
	d.src = src
	return keep, d.chunks[keep:]
}

// Chunks returns the current chunks.
func (d *Doc) Chunks() []Chunk { return d.chunks }

// htmlBlockEnds are the raw HTML blocks that go on across blank lines
// (CommonMark kinds 1–5), by how they start, with what ends them.
var htmlBlockEnds = [][2]string{
	{"<pre", "</pre>"}, {"<script", "</script>"}, {"<style", "</style>"}, {"<textarea", "</textarea>"},
	{"<!--", "-->"}, {"<?", "?>"}, {"<![CDATA[", "]]>"}, {"<!", ">"},
}

// CutPoints returns the offsets after from (a line start outside any
// block that spans blank lines) where src may be cut into chunks; see
// [Doc]. Only complete lines (ending in a line feed) are cut
// before.
func CutPoints(src string, from int) []int {
	var cuts []int
	var fence string   // the open fence's marker, "" outside
	var htmlEnd string // what closes the open raw HTML block, "" outside
	prevBlank := false
	for off := from; off < len(src); {
		nl := strings.IndexByte(src[off:], '\n')
		if nl < 0 {
			break // an incomplete last line is never cut before
		}
		line := src[off : off+nl]
		trim := strings.TrimLeft(line, " ")
		indent := len(line) - len(trim)
		blank := strings.TrimSpace(line) == ""
		switch {
		case fence != "":
			if indent < 4 && strings.HasPrefix(trim, fence) && strings.TrimSpace(strings.TrimLeft(trim, fence[:1])) == "" {
				fence = ""
			}
			blank = false
		case htmlEnd != "":
			if strings.Contains(line, htmlEnd) {
				htmlEnd = ""
			}
			blank = false
		default:
			if off > from && prevBlank && !blank && indent == 0 && !strings.HasPrefix(line, "\t") && !listMarker(line) {
				cuts = append(cuts, off)
			}
			if indent < 4 {
				if f := fenceOpen(trim); f != "" {
					fence = f
				} else if strings.HasPrefix(trim, "<") {
					low := strings.ToLower(trim)
					for _, h := range htmlBlockEnds {
						if strings.HasPrefix(low, h[0]) {
							if !strings.Contains(low[len(h[0]):], h[1]) {
								htmlEnd = h[1]
							}
							break
						}
					}
				}
			}
		}
		prevBlank = blank
		off += nl + 1
	}
	return cuts
}

// fenceOpen returns the fence a line opens (``` or ~~~, three or more),
// or "".
func fenceOpen(trim string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(trim) && trim[n] == c {
			n++
		}
		if n >= 3 {
			if c == '`' && strings.IndexByte(trim[n:], '`') >= 0 {
				return "" // a backtick fence's info string holds no backtick
			}
			return trim[:n]
		}
	}
	return ""
}

// listMarker reports whether line starts with a list item marker: -, *, +
// or digits followed by . or ), then a space or the end of the line.
func listMarker(line string) bool {
	if line == "" {
		return false
	}
	i := 0
	switch line[0] {
	case '-', '*', '+':
		i = 1
	default:
		for i < len(line) && i < 9 && line[i] >= '0' && line[i] <= '9' {
			i++
		}
		if i == 0 || i >= len(line) || (line[i] != '.' && line[i] != ')') {
			return false
		}
		i++
	}
	return i == len(line) || line[i] == ' ' || line[i] == '\t'
}
