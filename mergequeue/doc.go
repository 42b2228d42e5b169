// Package mergequeue is the merge point of a turn: a generic queue with many
// producers and one consumer that sees a single stream in arrival order.
//
// In the engine, the goroutine driving the LLM stream and one goroutine per
// running tool each hold a [Producer]; the run's consumer pops every message
// in the order the queue received it, writes it to the trace and to the
// output stream, and stops when [Queue.Pop] returns [ErrDone].
//
//	q := mergequeue.New[Msg](0)
//	driver := q.NewProducer() // before the consumer starts
//	go func() {
//		defer driver.Done()
//		for delta := range llm {
//			if err := driver.Push(ctx, delta); err != nil {
//				return // the consumer left or ctx ended
//			}
//		}
//	}()
//	for m, err := range q.All(ctx) { ... } // ends after every producer's Done
//
// A live producer may register another, as the driver does for each tool
// it starts; see the package example.
//
// # Order
//
// There is one total order, the order in which [Producer.Push] calls
// acquired the queue's mutex. Items of one producer keep the order that
// producer pushed them in; items of different producers interleave by
// arrival. The items of one Push call are contiguous: no other producer's
// item lands between them.
//
// # End of stream
//
// [Queue.Pop] returns [ErrDone] only when every registered producer has
// called [Producer.Done] and every queued item has been popped; with no
// producer registered and nothing queued it returns ErrDone at once. A live
// producer may register more producers at any time, so the stream cannot end
// while, say, the LLM driver is still handing work to new tools. After Pop
// has returned ErrDone the queue refuses new producers: their Push returns
// [ErrClosed].
//
// # Backpressure and memory
//
// A Push blocks while the queue holds its capacity or more items. A batch is
// admitted whole as soon as there is room for one item, so the queue may
// overshoot the bound by the size of that batch less one. Items live in a
// ring buffer that grows on demand up to the capacity plus the largest
// overshoot and never leaks popped slots: each is zeroed when popped.
// Signalling costs nothing when nobody waits, and [Queue.PopBatch] drains
// everything queued under one lock acquisition. For large items,
// [Producer.PushFunc] writes an item in place and [Queue.Swap] hands the
// consumer the whole buffer in exchange for its previous one, so an item is
// never copied by the queue (the engine's path: a message is copied once in
// and once out). [Producer.PushFuncIf] lets the fill decline its slot, and
// [Producer.Locked] runs a function under the queue's lock: state that only
// such functions touch needs no lock of its own (the engine checks and
// queues a streamed fragment that way, under one lock instead of two).
//
// # Concurrency and cancellation
//
// [Queue] and [Producer] are safe for concurrent use. Every blocking call
// takes a context and returns ctx.Err() when it is cancelled while waiting;
// the wait is woken by [context.AfterFunc], so no goroutine is started per
// wait and none is left behind. [Queue.Close] means the consumer is gone: it
// drops the queued items, wakes every waiter, and makes every later Push,
// Pop and PopBatch return [ErrClosed], which tells producers to unwind.
//
// # What it refuses
//
// The queue does not reorder, prioritise or deduplicate; putting tool
// outputs back in call order is the engine's job. It does not time out on
// its own: deadlines come from the caller's context. It never drops an item
// except on Close, and a Push after [Producer.Done] or Close is an error,
// not a silent loss.
package mergequeue
