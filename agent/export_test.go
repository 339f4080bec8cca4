package agent

import "context"

// CachedCallIDs is how many call ids the agent's cached state of a session
// remembers (0 when it caches none). It waits for the session's step lock,
// which guards the state.
func CachedCallIDs(a *Agent, sessionID string) int {
	unlock, err := a.lock(context.Background(), sessionID)
	if err != nil {
		return 0
	}
	defer unlock()
	a.mu.Lock()
	st := a.states[sessionID]
	a.mu.Unlock()
	if st == nil {
		return 0
	}
	return len(st.callIDs)
}
