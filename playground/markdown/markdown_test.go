package markdown

import (
	"reflect"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

var allowedTags = map[string]bool{
	"": true, "p": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"ul": true, "ol": true, "li": true, "blockquote": true, "pre": true, "code": true, "em": true,
	"strong": true, "del": true, "a": true, "br": true, "hr": true, "table": true, "thead": true,
	"tbody": true, "tr": true, "th": true, "td": true, "span": true,
}

var allowedAttrs = map[string]bool{"href": true, "target": true, "rel": true, "class": true, "start": true, "data-lang": true}

// checkSafe fails when a node has a tag or attribute outside the allowlist,
// or a link that is not an absolute http(s)/mailto URL opened safely.
func checkSafe(t *testing.T, src string, nodes []*Node) {
	t.Helper()
	var walk func(n *Node)
	walk = func(n *Node) {
		if !allowedTags[n.Tag] {
			t.Errorf("%q: tag %q", src, n.Tag)
		}
		if n.Tag == "" && (len(n.Attrs) > 0 || len(n.Kids) > 0) {
			t.Errorf("%q: text node with attributes or children", src)
		}
		for _, a := range n.Attrs {
			if !allowedAttrs[a[0]] {
				t.Errorf("%q: attribute %q", src, a[0])
			}
			if a[0] == "class" && strings.ContainsAny(a[1], "\"'<> ") && n.Tag != "span" {
				t.Errorf("%q: class %q", src, a[1])
			}
		}
		if n.Tag == "a" {
			h := n.Attr("href")
			low := strings.ToLower(h)
			if !(strings.HasPrefix(low, "http://") || strings.HasPrefix(low, "https://") || strings.HasPrefix(low, "mailto:")) {
				t.Errorf("%q: href %q", src, h)
			}
			if n.Attr("rel") != "noopener noreferrer" || n.Attr("target") != "_blank" {
				t.Errorf("%q: link attrs %v", src, n.Attrs)
			}
		}
		for _, k := range n.Kids {
			walk(k)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
}

// XSSCorpus is shared with the browser tests' idea of hostile input: none
// of it may become anything but text and safe links.
var xssCorpus = []string{
	`<script>window.__xss=1</script>`,
	`<img src=x onerror="window.__xss=1">`,
	`<svg onload="window.__xss=1"><circle r=1></svg>`,
	`[click](javascript:window.__xss=1)`,
	`[click](JaVaScRiPt:alert(1))`,
	"[click](\x01javascript:alert(1))",
	`[click](  javascript:alert(1))`,
	`[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)`,
	`![img](javascript:alert(1))`,
	`![img](https://example.com/x.png "t")`,
	`<a href="javascript:alert(1)">x</a>`,
	`[x](&#106;avascript:alert(1))`,
	`[x](java&#x09;script:alert(1))`,
	`<noscript><p title="</noscript><img src=x onerror=alert(1)>">`,
	`<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
	"```\"><img src=x onerror=alert(1)>\ncode\n```",
	`<http://example.com/"onmouseover="alert(1)>`,
	`[ref]` + "\n\n" + `[ref]: javascript:alert(1)`,
	`<iframe src="javascript:alert(1)"></iframe>`,
	`[x](vbscript:msgbox(1))`,
	`[x](//evil.example/path)`,
	`[x](/relative)`,
}

func TestMarkdownSafe(t *testing.T) {
	for _, src := range xssCorpus {
		nodes := Render(src)
		checkSafe(t, src, nodes)
	}
	good := Render("[a](https://example.com/?q=1) <https://x.example> [m](mailto:a@b.example)")
	var hrefs []string
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Tag == "a" {
			hrefs = append(hrefs, n.Attr("href"))
		}
		for _, k := range n.Kids {
			walk(k)
		}
	}
	for _, n := range good {
		walk(n)
	}
	want := []string{"https://example.com/?q=1", "https://x.example", "mailto:a@b.example"}
	if !reflect.DeepEqual(hrefs, want) {
		t.Errorf("hrefs %q, want %q", hrefs, want)
	}
}

func TestMarkdownShapes(t *testing.T) {
	tests := []struct{ src, want string }{
		{"# T\n\npara *em* **b** `c` ~~d~~", "h1(T) p(para em(em) strong(b) code(c) del(d))"},
		{"- a\n- b", "ul(li(a) li(b))"},
		{"3. a", "ol(li(a))"},
		{"```go\nx := 1\n```", "pre(code(x := 1))"},
		{"> q", "blockquote(p(q))"},
		{"a\\*b &amp; &#65;", "p(a*b & A)"},
		{"<b>raw</b>", "p(<b> raw </b>)"},
		{"| h |\n|---|\n| c |", "table(thead(tr(th(h))) tbody(tr(td(c))))"},
		{"line  \nbreak", "p(line br() break)"},
	}
	for _, tc := range tests {
		if got := shape(Render(tc.src)); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.src, got, tc.want)
		}
	}
}

func shape(nodes []*Node) string {
	var parts []string
	for _, n := range nodes {
		if n.Tag == "" {
			if s := strings.TrimSpace(n.Text); s != "" || n.Text == "\n" {
				if n.Text == "\n" {
					continue
				}
				parts = append(parts, s)
			}
			continue
		}
		parts = append(parts, n.Tag+"("+shape(n.Kids)+")")
	}
	s := strings.Join(parts, " ")
	return s
}

func TestCutPoints(t *testing.T) {
	src := "para one\n\n# head\n\n```\ncode\n\nmore\n```\n\n- a\n\n- b\n\n    indented\n\nlast\n"
	var got []string
	for _, c := range CutPoints(src, 0) {
		got = append(got, strings.SplitN(src[c:], "\n", 2)[0])
	}
	want := []string{"# head", "```", "last"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cuts before %q, want %q", got, want)
	}
}

// streamDoc feeds src to a Doc in pieces of n bytes, keeping the
// chunks as a view would, and returns the view's nodes.
func streamDoc(src string, n int) ([]*Node, int) {
	var d Doc
	var view []Chunk
	rebuilt := 0
	for i := n; ; i += n {
		if i > len(src) {
			i = len(src)
		}
		keep, fresh := d.Update(src[:i], false)
		view = append(view[:keep], fresh...)
		rebuilt += len(fresh)
		if i == len(src) {
			break
		}
	}
	var out []*Node
	for _, c := range view {
		out = append(out, c.Nodes...)
	}
	return out, rebuilt
}

func TestMarkdownDocIncremental(t *testing.T) {
	src := strings.Repeat("Some *text* with `code` and a [link](https://example.com).\n\n```go\nfunc f() {}\n\n// more\n```\n\n- one\n- two\n\n", 20)
	got, rebuilt := streamDoc(src, 7)
	if want := Render(src); !reflect.DeepEqual(got, want) {
		t.Errorf("streamed rendering differs from a full parse:\n%s\n%s", shape(got), shape(want))
	}
	if steps := (len(src) + 6) / 7; rebuilt > steps+len(CutPoints(src, 0))+1 {
		t.Errorf("rebuilt %d chunks over %d updates: more than the last chunk each time", rebuilt, steps)
	}
	var d Doc
	d.Update("abc", false)
	if keep, fresh := d.Update("xyz", false); keep != 0 || len(fresh) != 1 {
		t.Errorf("a source that does not extend the last: keep %d, %d fresh", keep, len(fresh))
	}
	if keep, fresh := d.Update("xyz\n\nmore", true); keep != 0 || len(fresh) != 1 || len(fresh[0].Nodes) != 2 {
		t.Errorf("final: keep %d, fresh %+v", keep, fresh)
	}
}

// gfm is goldmark with GFM's tables unbounded.
var gfm = goldmark.New(goldmark.WithExtensions(extension.GFM))

// tableFillOf returns the most empty cells that fill one table of doc
// (cells of no line: a cell of the source has one, if empty).
func tableFillOf(doc ast.Node) int {
	most := 0
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := n.(*east.Table); ok && entering {
			fill := 0
			ast.Walk(t, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
				if _, ok := c.(*east.TableCell); ok && entering && c.Lines().Len() == 0 {
					fill++
				}
				return ast.WalkContinue, nil
			})
			most = max(most, fill)
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return most
}

// hasLinkDefinition reports whether src holds a link reference definition.
func hasLinkDefinition(src string) bool {
	found := false
	b := []byte(src)
	ast.Walk(md.Parser().Parse(text.NewReader(b)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if _, ok := n.(*ast.LinkReferenceDefinition); ok {
			found = true
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	return found
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range xssCorpus {
		f.Add(s, 3)
	}
	f.Add("# a\n\n- b\n\n```\nc\n\n```\n\nd", 2)
	f.Add("| a | b \\| c |\n|:--|--:|\n| 1 |\n|\n| x | y | z |\n", 4)
	f.Add("- a\n\n  ```\n  x\n\ny\n```\n\nz\n\nw\n", 3)
	f.Fuzz(func(t *testing.T, src string, n int) {
		if n <= 0 || n > 64 {
			n = 5
		}
		got, _ := streamDoc(src, n)
		checkSafe(t, src, got)
		// Text appended later changes no chunk before the last: streamed
		// in pieces, the source renders as in one update.
		if whole, _ := streamDoc(src, max(len(src), 1)); !reflect.DeepEqual(got, whole) {
			t.Fatalf("%q streamed in pieces of %d:\n%s\nin one update:\n%s", src, n, shape(got), shape(whole))
		}
		// Chunks render as a full parse does, but for links defined in
		// another chunk than their use (the final render parses whole).
		if !hasLinkDefinition(src) && !reflect.DeepEqual(got, Render(src)) {
			t.Fatalf("%q streamed in pieces of %d:\n%s\na full parse:\n%s", src, n, shape(got), shape(Render(src)))
		}
		checkSafe(t, src, Render(src))
		// Tables come out as GFM makes them, unless one takes more
		// empty cells than the bound; past it, cells are bounded.
		if len(src) < 1<<14 {
			b := []byte(src)
			doc := gfm.Parser().Parse(text.NewReader(b))
			if tableFillOf(doc) <= maxTableFill {
				if want := convert(doc, b); !reflect.DeepEqual(Render(src), want) {
					t.Fatalf("%q: %s, GFM's %s", src, shape(Render(src)), shape(want))
				}
			}
		}
		if nodes := Render(src); countTags(nodes, "td")+countTags(nodes, "th") > len(src)+countTags(nodes, "table")*maxTableFill {
			t.Fatalf("%q: %d cells", src, countTags(nodes, "td")+countTags(nodes, "th"))
		}
		for _, c := range CutPoints(src, 0) {
			if c <= 0 || c >= len(src) || src[c-1] != '\n' {
				t.Fatalf("cut %d is not a line start", c)
			}
		}
	})
}

// A table's column alignment (|:--|:-:|--:|) is a class on each cell.
func TestMarkdownTableAlignment(t *testing.T) {
	nodes := Render("| a | b | c | d |\n|:--|:-:|--:|---|\n| 1 | 2 | 3 | 4 |")
	var got []string
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Tag == "th" || n.Tag == "td" {
			got = append(got, n.Tag+":"+n.Attr("class"))
		}
		for _, k := range n.Kids {
			walk(k)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	want := []string{"th:align-left", "th:align-center", "th:align-right", "th:", "td:align-left", "td:align-center", "td:align-right", "td:"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cells %q, want %q", got, want)
	}
}

// A link reference definition defines a link and shows nothing: it was
// drawn as a paragraph of its own source ("[1]: https://…").
func TestMarkdownLinkReferenceDefinitions(t *testing.T) {
	tests := []struct{ src, want string }{
		{"See [the docs][1].\n\n[1]: https://example.com/docs \"Docs\"\n", "p(See a(the docs) .)"},
		{"[a]: https://a.example\n[b]: https://b.example\n\n[a] and [b]", "p(a(a) and a(b))"},
		{"- see [x]\n\n  [x]: javascript:alert(1)\n", "ul(li(p(see span(x))))"},
	}
	for _, tc := range tests {
		nodes := Render(tc.src)
		checkSafe(t, tc.src, nodes)
		if got := shape(nodes); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.src, got, tc.want)
		}
	}
}

// countTags counts the nodes of tag in nodes.
func countTags(nodes []*Node, tag string) int {
	n := 0
	for _, k := range nodes {
		if k.Tag == tag {
			n++
		}
		n += countTags(k.Kids, tag)
	}
	return n
}

// A table's short rows are filled with empty cells to the header's width,
// up to maxTableFill of them in a table; past that the table is shown as
// its text. A header of n columns over n rows of "|" made n² cells: 24 KB
// of source took over a minute to parse.
func TestMarkdownTableFillBound(t *testing.T) {
	if got := shape(Render("| a | b | c |\n|---|---|---|\n| 1 |\n| 1 | 2 | 3 | 4 |")); got != "table(thead(tr(th(a) th(b) th(c))) tbody(tr(td(1) td() td()) tr(td(1) td(2) td(3))))" {
		t.Errorf("short and long rows: %s", got)
	}
	// 101 columns; each row of one cell takes 100 empty ones.
	table := func(rows int) string {
		return "|" + strings.Repeat(" h |", 101) + "\n|" + strings.Repeat("---|", 101) + "\n" + strings.Repeat("| x |\n", rows)
	}
	if n := countTags(Render(table(maxTableFill/100)), "td"); n != 101*maxTableFill/100 {
		t.Errorf("%d empty cells to fill: %d cells, want a table of %d", maxTableFill, n, 101*maxTableFill/100)
	}
	over := Render(table(maxTableFill/100 + 1))
	if n := countTags(over, "table"); n != 0 || shape(over) == "" || !strings.HasPrefix(over[0].TextContent(), "| h |") {
		t.Errorf("%d empty cells to fill: %d tables, %.60s, want the text", maxTableFill+100, n, shape(over))
	}
	// The header's width is that of its delimiter row, which a row of
	// many cells does not change; a backslash-escaped pipe splits no cell.
	src := "| a \\| b |\n|---|\n" + strings.Repeat("|", 3000) + "\n"
	if got := shape(Render(src)); got != "table(thead(tr(th(a | b))) tbody(tr(td())))" {
		t.Errorf("%.40q: %.200s", src, got)
	}
	n := 2000
	src = "|" + strings.Repeat("a|", n) + "\n|" + strings.Repeat("-|", n) + "\n" + strings.Repeat("|\n", n)
	if cells := countTags(Render(src), "td"); cells > maxTableFill {
		t.Errorf("a header of %d columns over %d rows of \"|\": %d cells", n, n, cells)
	}
}

// Backslash escapes and character references are resolved in one pass,
// in text, link destinations and a fence's language: an escaped & starts
// no reference, and what a reference gives is not read again.
func TestMarkdownEscapesAndReferences(t *testing.T) {
	tests := []struct{ src, want string }{
		{`\&ouml; is not a reference`, "&ouml; is not a reference"},
		{`&#38;lt; and &#x26;amp; show a reference`, "&lt; and &amp; show a reference"},
		{`&amp;lt; &ouml; &#65; \* \\`, "&lt; ö A * \\"},
		{"a\x00b &#0;", "a\uFFFDb \uFFFD"},
	}
	for _, tc := range tests {
		nodes := Render(tc.src)
		if len(nodes) != 1 || nodes[0].TextContent() != tc.want {
			t.Errorf("%q: %q, want %q", tc.src, shape(nodes), tc.want)
		}
	}
	hrefs := map[string]string{
		`[a](https://x.example/?q=\&amp;)`:  "https://x.example/?q=&amp;",
		`[a](https://x.example/&#38;amp;)`:  "https://x.example/&amp;",
		`[a](https://x.example/&ouml;\(\))`: "https://x.example/%C3%B6%28%29",
	}
	for src, want := range hrefs {
		nodes := Render(src)
		if len(nodes) != 1 || len(nodes[0].Kids) != 1 || nodes[0].Kids[0].Attr("href") != want {
			t.Errorf("%q: %q, want href %q", src, shape(nodes), want)
			continue
		}
	}
	if pre := Render("```c\\+\\+\nint x;\n```")[0]; pre.Attr("data-lang") != "c++" {
		t.Errorf("language %q, want c++", pre.Attr("data-lang"))
	}
}

// A streamed source is cut only where a full parse starts a top-level
// block. A fence opened in a list item ends with the item; a fence line
// after it opens a fence of its own, which the cuts' scan took for the
// first one's end: what came after it was cut into paragraphs while it
// streamed, and turned to code at the final render.
func TestMarkdownDocCutsBetweenBlocks(t *testing.T) {
	for _, src := range []string{
		"- a\n\n  ```\n  x\n\ny\n```\n\nz\n\nw\n",
		"1. a\n\n   ~~~\n   x\n\nb\n~~~\n\nc\n\nd\n",
	} {
		for _, n := range []int{1, 3, len(src)} {
			if got, want := shapeOf(streamDoc(src, n)), shape(Render(src)); got != want {
				t.Errorf("%q in pieces of %d: %s, a full parse %s", src, n, got, want)
			}
		}
	}
}

func shapeOf(nodes []*Node, _ int) string { return shape(nodes) }

// depth is the most nested elements in nodes.
func depth(nodes []*Node) int {
	d := 0
	for _, n := range nodes {
		if n.Tag != "" {
			d = max(d, 1+depth(n.Kids))
		}
	}
	return d
}

// Quotes, lists and emphasis nest at most maxDepth elements deep; past
// that their text is drawn flat. Chromium's tab crashed laying out a few
// thousand nested elements, which ">" 5,000 times (5 KB) made.
func TestMarkdownNestingBound(t *testing.T) {
	tests := map[string]string{
		"quotes": strings.Repeat(">", 5000) + " deep",
		"lists":  strings.Repeat("- ", 3000) + "deep",
		"indented": func() string {
			var b strings.Builder
			for i := range 300 {
				b.WriteString(strings.Repeat(" ", 2*i) + "- deep\n")
			}
			return b.String()
		}(),
		"emphasis": strings.Repeat("*", 4000) + "deep" + strings.Repeat("*", 4000),
		"mixed":    strings.Repeat("> - ", 2000) + "**[*deep*](https://example.com)**",
	}
	for name, src := range tests {
		nodes := Render(src)
		checkSafe(t, name, nodes)
		if d := depth(nodes); d > maxDepth+4 {
			t.Errorf("%s: %d elements deep", name, d)
		}
		if s := (&Node{Kids: nodes}).TextContent(); !strings.Contains(s, "deep") {
			t.Errorf("%s: text %.80q lost", name, s)
		}
	}
	// Below the bound, nothing changes.
	src := strings.Repeat("> ", maxDepth/2) + "- a\n" + strings.Repeat("> ", maxDepth/2) + "- b"
	if got := depth(Render(src)); got != maxDepth/2+2 {
		t.Errorf("%d quotes over a list: %d elements deep, want %d", maxDepth/2, got, maxDepth/2+2)
	}
	if got, want := shape(Render("- a\n  - *b **c***\n    > d")), "ul(li(a ul(li(em(b strong(c)) blockquote(p(d))))))"; got != want {
		t.Errorf("%s, want %s", got, want)
	}
}
