package playground

// demoFiles is the content of the demo workspace: a tiny note-taking service.
var demoFiles = map[string]string{
	"README.md": `# notes

A tiny note-taking service.

    go run ./cmd/notes -addr 127.0.0.1:9000

Notes live in memory; restart and they are gone.
`,
	"go.mod": `module example.com/notes

go 1.26
`,
	"cmd/notes/main.go": `package main

import (
	"flag"
	"log"
	"net/http"

	"example.com/notes/internal/store"
	"example.com/notes/internal/web"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "listen address")
	flag.Parse()
	s := store.New()
	log.Printf("notes on http://%s/", *addr)
	log.Fatal(http.ListenAndServe(*addr, web.Handler(s)))
}
`,
	"internal/store/store.go": `// Package store keeps notes in memory.
package store

import "sync"

// Note is one note.
type Note struct {
	ID   int
	Text string
}

// Store is safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	notes []Note
}

// New returns an empty Store.
func New() *Store { return &Store{} }

// Add stores text and returns its note.
func (s *Store) Add(text string) Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := Note{ID: len(s.notes) + 1, Text: text}
	s.notes = append(s.notes, n)
	return n
}

// All returns every note, oldest first.
func (s *Store) All() []Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Note(nil), s.notes...)
}
`,
	"internal/store/store_test.go": `package store

import "testing"

func TestAdd(t *testing.T) {
	s := New()
	s.Add("one")
	if n := s.Add("two"); n.ID != 2 {
		t.Fatalf("ID = %d, want 2", n.ID)
	}
	if got := len(s.All()); got != 2 {
		t.Fatalf("len(All) = %d, want 2", got)
	}
}
`,
	"internal/web/handler.go": `// Package web serves the notes over HTTP.
package web

import (
	"encoding/json"
	"net/http"

	"example.com/notes/internal/store"
)

// Handler lists notes on GET and adds one on POST.
func Handler(s *store.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			json.NewEncoder(w).Encode(s.All())
		case http.MethodPost:
			var in struct{ Text string }
			if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			json.NewEncoder(w).Encode(s.Add(in.Text))
		default:
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})
}
`,
}
