package mergequeue_test

import (
	"context"
	"fmt"

	"github.com/floehq/floe/mergequeue"
)

// A driver and a tool it registered share one queue; the consumer sees one
// stream and stops once both are done.
func Example() {
	ctx := context.Background()
	q := mergequeue.New[string](0)
	driver := q.NewProducer() // before the consumer starts
	driver.Push(ctx, "request_begin", "tool_call A")
	tool := q.NewProducer() // the live driver registers the tool
	driver.Push(ctx, "request_end")
	driver.Done()
	go func() {
		defer tool.Done()
		tool.Push(ctx, "tool_call_output A")
	}()

	for m, err := range q.All(ctx) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(m)
	}
	// Output:
	// request_begin
	// tool_call A
	// request_end
	// tool_call_output A
}

// PopBatch takes everything queued at once, reusing one slice.
func ExampleQueue_PopBatch() {
	ctx := context.Background()
	q := mergequeue.New[int](0)
	p := q.NewProducer()
	p.Push(ctx, 1, 2, 3)
	p.Push(ctx, 4)
	p.Done()

	var batch []int
	for {
		var err error
		batch, err = q.PopBatch(ctx, batch[:0], 3)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(batch)
	}
	// Output:
	// [1 2 3]
	// [4]
	// mergequeue: done
}

// PushFuncIf checks and queues an item under the queue's lock: the
// checker's state (here, the last value taken) needs no lock of its own,
// and a declined item leaves no trace in the queue.
func ExampleProducer_PushFuncIf() {
	ctx := context.Background()
	q := mergequeue.New[int](0)
	p := q.NewProducer()
	last := 0 // guarded by the queue's lock: only fill functions touch it
	for _, v := range []int{1, 2, 2, 5, 3} {
		ok, _ := p.PushFuncIf(ctx, func(slot *int) bool {
			if v <= last {
				return false // not increasing: declined
			}
			*slot, last = v, v
			return true
		})
		fmt.Println(v, ok)
	}
	p.Done()
	items, _ := q.Swap(ctx, nil)
	fmt.Println(items)
	// Output:
	// 1 true
	// 2 true
	// 2 false
	// 5 true
	// 3 false
	// [1 2 5]
}
