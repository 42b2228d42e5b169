package engine_test

import (
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/floehq/floe/engine/omni"
)

// TestMain fails the package when a test's runs wrote through a Rest that
// the engine's messages share (an approval_decision of a standard
// decision, a request_end that completed at once): the engine never
// writes a message's Rest once built.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range []string{omni.DecisionAllow, omni.DecisionDeny, omni.DecisionForbidden} {
		if r := omni.ApprovalDecisionMsg(d, "").Payload.Rest; !reflect.DeepEqual(*r, omni.Rest{Decision: d}) {
			fmt.Fprintf(os.Stderr, "the shared Rest of approval_decision{%s} was written to: %+v\n", d, *r)
			code = 1
		}
	}
	if r := omni.CompletedEndRest(); !reflect.DeepEqual(*r, omni.Rest{Status: omni.StatusCompleted}) {
		fmt.Fprintf(os.Stderr, "the shared Rest of request_end{completed} was written to: %+v\n", *r)
		code = 1
	}
	os.Exit(code)
}
