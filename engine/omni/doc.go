// Package omni implements the OmniMessage wire protocol: the message types,
// a JSON codec that is byte-compatible with the reference implementation,
// builders for the messages the engine synthesizes, protocol validation,
// and the two stream helpers built on the streaming rules: a checker for
// one producer ([Discipline]) and a renderer-side [Aggregator].
//
// Every message the engine streams, writes to a Trace or hands to the LLM
// is one [Message] (an envelope) carrying one [Payload].
//
// # Codec
//
// [Decode] reads one envelope, [DecodeArray] a JSON array of envelopes in
// one pass, and [Message.AppendJSON] / [Message.MarshalJSON] write one. The
// decoder is a hand-written single-pass scanner; it does not use
// encoding/json.
//
// Guarantees:
//
//   - Output is what JavaScript's JSON.stringify writes for the same
//     object with keys in the reference order of PROTOCOL.md: only '"',
//     '\' and control characters are escaped (control characters as
//     \u00XX, lowercase), so "<", "&", U+2028 and U+2029 are written raw.
//     A Trace written here diffs cleanly against one written by the
//     reference.
//   - Forwarded messages are written verbatim (PROTOCOL.md P-5): unknown
//     payload keys are kept in [Rest.Extra] in order with their raw
//     bytes, fidelity is kept byte for byte, and a decoded payload is
//     written back with exactly the keys it had (missing required keys are
//     not invented; [Payload.Has] tells which were present). A payload
//     built in Go always gets the required keys of its type.
//   - decode → encode → decode gives an equal value, and encoding that
//     value again gives identical bytes. The one normalization is that an
//     empty origin is dropped (P-3).
//   - Strings are unescaped like encoding/json does, \uXXXX surrogate pairs
//     included; invalid UTF-8 and unpaired surrogates become U+FFFD.
//   - Decoding a partial_text envelope costs two allocations (timestamp and
//     text): protocol strings such as "model_msg" or "delta" are interned.
//
// # What the decoder refuses
//
// Anything that is not exactly one JSON object (trailing data included),
// duplicate keys at any level the codec interprets (unknown payload keys
// included), a value of the wrong JSON type for a known key (the error
// names the path, e.g. payload.text or [3].payload.images[0]), integers
// with a fraction or out of int64 range, nesting deeper than 512 levels,
// and input over [MaxMessageBytes] ([ErrTooLarge]). Errors are
// *[DecodeError]. Allocation is bounded by the input size. Unknown
// envelope keys are ignored; "reason": null (abort) and "origin": null are
// accepted; model_context_window may be a number or a string and is kept
// raw.
//
// The decoder does not check the protocol's rules: call [Validate], which
// checks envelope and payload types, required keys, enum values, role
// constraints, origin and timestamp, and reports a *[ValidationError]
// naming the field and the offending value. Validate does not allocate
// when the message is valid, so it can run on every streamed fragment.
//
// # Streaming fragments
//
// A producer (the LLM, one tool call) streams a segment as partial_*
// fragments — start, deltas, stop — followed immediately by the complete
// message (PROTOCOL.md P-6 to P-8). [Discipline] checks one producer's
// messages against those rules. [Aggregator] consumes the merged stream of
// all producers and returns complete messages, building them from
// fragments when the complete message never comes; [Aggregator.Open]
// snapshots the open fragments (TRANSPORT.md live.fragments).
//
// # Concurrency
//
// Messages are values; slices inside them are shared between copies and
// must not be modified once a message has been emitted. The functions of
// this package are safe for concurrent use; a [Discipline] or an
// [Aggregator] is not, and belongs to one goroutine.
package omni
