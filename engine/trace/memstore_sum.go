//go:build !js || floenode

package trace

import "context"

var _ Summarizer = (*MemStore)(nil)

// Summaries implements [Summarizer]: each session's first prompt is read
// from its lowest-index file in place. Without it, List read each session
// through ReadFile, which copies the file whole (ten sessions of 15 MB:
// 150 MB at every listing). Not in floe.wasm, whose size is budgeted.
func (s *MemStore) Summaries(ctx context.Context) ([]Summary, error) {
	infos, err := s.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Summary, 0, len(infos))
	for _, info := range infos {
		sess := s.sessions[info.ID]
		if sess == nil {
			continue // deleted meanwhile
		}
		first := 0
		for i := range sess.files {
			if first == 0 || i < first {
				first = i
			}
		}
		data := sess.files[first].data
		prompt, _ := FirstPrompt(data)
		out = append(out, Summary{SessionInfo: info, FirstPrompt: prompt, Source: MetaSource(data)})
	}
	return out, nil
}
