package mergequeue_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/floehq/floe/mergequeue"
)

// benchItems is how many items one benchmark op streams, as many as the
// text deltas of a long response.
const benchItems = 100_000

// message is about the size (704 bytes) and pointer density of the
// engine's message value.
type message struct {
	Fields [40]string
	Images []string
	Seq    int64
	N      [4]int64
}

var benchMessage = message{Fields: [40]string{"partial_text", "delta", "Hello"}}

// reportPerItem reports the time per streamed item.
func reportPerItem(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchItems), "ns/item")
}

// produce runs the producers, each sending its share of benchItems with
// send, and calls done after all have finished.
func produce(producers int, send func(i int, n int), done func()) {
	var wg sync.WaitGroup
	for i := range producers {
		n := benchItems / producers
		if i == 0 {
			n += benchItems % producers
		}
		wg.Go(func() { send(i, n) })
	}
	go func() { wg.Wait(); done() }()
}

// BenchmarkChannel is the baseline: a buffered channel of the queue's
// default capacity, plain sends ("send") or sends that also watch a
// context as an engine producer must ("select").
func BenchmarkChannel(b *testing.B) {
	for _, producers := range []int{1, 4} {
		for _, kind := range []string{"send", "select"} {
			b.Run(fmt.Sprintf("int/%s/producers=%d", kind, producers), func(b *testing.B) {
				benchChannel(b, kind == "select", producers, 7)
			})
			b.Run(fmt.Sprintf("message/%s/producers=%d", kind, producers), func(b *testing.B) {
				benchChannel(b, kind == "select", producers, benchMessage)
			})
		}
	}
}

func benchChannel[T any](b *testing.B, watchCtx bool, producers int, v T) {
	b.ReportAllocs()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last T
	for b.Loop() {
		ch := make(chan T, mergequeue.DefaultCapacity)
		produce(producers, func(_, n int) {
			for range n {
				if !watchCtx {
					ch <- v
					continue
				}
				select {
				case ch <- v:
				case <-ctx.Done():
					return
				}
			}
		}, func() { close(ch) })
		got := 0
		for x := range ch {
			last = x
			got++
		}
		if got != benchItems {
			b.Fatalf("got %d items", got)
		}
	}
	_ = last
	reportPerItem(b)
}

// BenchmarkQueue streams the same items through a Queue of default
// capacity, consumed with Pop, PopBatch or All.
func BenchmarkQueue(b *testing.B) {
	for _, producers := range []int{1, 4} {
		for _, consumer := range []string{"Pop", "PopBatch", "All"} {
			b.Run(fmt.Sprintf("int/%s/producers=%d", consumer, producers), func(b *testing.B) {
				benchQueue(b, consumer, producers, 7)
			})
			b.Run(fmt.Sprintf("message/%s/producers=%d", consumer, producers), func(b *testing.B) {
				benchQueue(b, consumer, producers, benchMessage)
			})
		}
	}
}

func benchQueue[T any](b *testing.B, consumer string, producers int, v T) {
	b.ReportAllocs()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last T
	var batch []T
	for b.Loop() {
		q := mergequeue.New[T](0)
		ps := make([]*mergequeue.Producer[T], producers)
		for i := range ps {
			ps[i] = q.NewProducer()
		}
		produce(producers, func(i, n int) {
			defer ps[i].Done()
			for range n {
				if err := ps[i].Push(ctx, v); err != nil {
					return
				}
			}
		}, func() {})
		got := 0
		switch consumer {
		case "Pop":
			for {
				x, err := q.Pop(ctx)
				if err != nil {
					break
				}
				last = x
				got++
			}
		case "PopBatch":
			for {
				var err error
				batch, err = q.PopBatch(ctx, batch[:0], 0)
				if err != nil {
					break
				}
				last = batch[len(batch)-1]
				got += len(batch)
			}
		case "All":
			for x, err := range q.All(ctx) {
				if err != nil {
					break
				}
				last = x
				got++
			}
		}
		if got != benchItems {
			b.Fatalf("got %d items", got)
		}
	}
	_ = last
	reportPerItem(b)
}
