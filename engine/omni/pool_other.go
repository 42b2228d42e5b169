//go:build !wasm

package omni

// poolBodiesTo is maxPooledBody natively: a buffer of a long text (W2's is
// 1 MB) is kept too, for the next long stream, until the next collection
// empties the pool.
const poolBodiesTo = 4 << 20
