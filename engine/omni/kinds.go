package omni

import "unsafe"

// same reports s == c, where c is usually one of this package's
// constants. A string the decoders intern shares c's bytes; that is
// checked first, so the common case costs no call (on WebAssembly the
// compiler calls runtime.memequal, a byte loop, for any constant over six
// bytes).
func same(s, c string) bool {
	return len(s) == len(c) && (unsafe.StringData(s) == unsafe.StringData(c) || s == c)
}

// roleBits are the roles a model_msg payload type allows.
const (
	roleUserBit uint8 = 1 << iota
	roleAssistantBit
)

// roleBit returns the bit of a standard role, or 0.
func roleBit(role string) uint8 {
	switch {
	case same(role, RoleAssistant):
		return roleAssistantBit
	case same(role, RoleUser):
		return roleUserBit
	}
	return 0
}

// modelType is what validation needs of a model_msg payload type.
type modelType struct {
	name     string
	lay      *layout
	roles    uint8 // the roles allowed
	partial  bool  // a partial_* type: event_type is start, delta or stop
	needID   bool  // tool_call_id must not be empty
	needName bool  // name must not be empty
	body     uint8 // the field a fragment streams: bodyText...
}

// The body fields of the streamed types.
const (
	bodyNone uint8 = iota
	bodyText
	bodyThinking
	bodyArguments
	bodyOutput
)

var (
	mtText                  = modelType{Text, &layoutText, roleUserBit | roleAssistantBit, false, false, false, bodyText}
	mtImageURL              = modelType{ImageURL, &layoutImageURL, roleUserBit, false, false, false, bodyNone}
	mtInlineData            = modelType{InlineData, &layoutInlineData, roleUserBit | roleAssistantBit, false, false, false, bodyNone}
	mtThinking              = modelType{Thinking, &layoutThinking, roleAssistantBit, false, false, false, bodyThinking}
	mtInlineThinking        = modelType{InlineThinking, &layoutInlineThinking, roleAssistantBit, false, false, false, bodyNone}
	mtToolCall              = modelType{ToolCall, &layoutToolCall, roleAssistantBit, false, true, true, bodyArguments}
	mtToolCallOutput        = modelType{ToolCallOutput, &layoutToolCallOutput, roleUserBit, false, true, false, bodyOutput}
	mtPartialText           = modelType{PartialText, &layoutPartialText, roleAssistantBit, true, false, false, bodyText}
	mtPartialThinking       = modelType{PartialThinking, &layoutPartialThinking, roleAssistantBit, true, false, false, bodyThinking}
	mtPartialToolCall       = modelType{PartialToolCall, &layoutPartialToolCall, roleAssistantBit, true, true, false, bodyArguments}
	mtPartialToolCallOutput = modelType{PartialToolCallOutput, &layoutPartialToolCallOutput, roleUserBit, true, true, false, bodyOutput}
)

// modelTypes lists every model_msg payload type (a test checks it against
// the protocol's list).
var modelTypes = [...]*modelType{
	&mtText, &mtImageURL, &mtInlineData, &mtThinking, &mtInlineThinking, &mtToolCall,
	&mtToolCallOutput, &mtPartialText, &mtPartialThinking, &mtPartialToolCall, &mtPartialToolCallOutput,
}

// modelTypeOf returns the model_msg payload type named t, or nil. The
// candidates are told apart by length and one byte, then t is compared once.
func modelTypeOf(t string) *modelType {
	var mt *modelType
	switch len(t) {
	case len(Text):
		mt = &mtText
	case len(Thinking):
		mt = &mtThinking
	case len(ImageURL): // and ToolCall
		if t[0] == 'i' {
			mt = &mtImageURL
		} else {
			mt = &mtToolCall
		}
	case len(InlineData):
		mt = &mtInlineData
	case len(PartialText):
		mt = &mtPartialText
	case len(InlineThinking):
		mt = &mtInlineThinking
	case len(ToolCallOutput): // and PartialThinking
		if t[0] == 't' {
			mt = &mtToolCallOutput
		} else {
			mt = &mtPartialThinking
		}
	case len(PartialToolCall):
		mt = &mtPartialToolCall
	case len(PartialToolCallOutput):
		mt = &mtPartialToolCallOutput
	default:
		return nil
	}
	if !same(t, mt.name) {
		return nil
	}
	return mt
}
