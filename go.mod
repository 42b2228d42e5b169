module github.com/floehq/floe

go 1.26

require (
	github.com/norunners/vert v0.0.0-20221203075838-106a353d42dd
	github.com/yuin/goldmark v1.8.7
	honnef.co/go/js/dom/v2 v2.0.0-20231112215516-51f43a291193
)

require github.com/syumai/workers v0.33.0
