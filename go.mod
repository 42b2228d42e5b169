module github.com/floehq/floe

go 1.26
