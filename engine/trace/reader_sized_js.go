//go:build js && !floenode

package trace

import "github.com/floehq/floe/engine/omni"

// presize is off in floe.wasm, whose size is budgeted: ReadFile's slices
// grow as they are appended to there.
const presize = false

func sized([]byte) ([]omni.Message, []int) { return nil, nil }
