//go:build wasm

package omni

// poolBodiesTo is maxPooledBody on WebAssembly, where the module's memory
// follows the largest buffer the heap has held: a long text's buffer is
// left to the collector.
const poolBodiesTo = 256 << 10
