package catalog

import "strings"

// An action is what an operation does to its object, the verb of "create a team", "list
// branches", "delete an artifact". Nearly every API names its operations verb + object
// (createIssue, issues_create, DeleteBucket, list_files) and starts their descriptions with the
// verb ("Lists the …"), and a request in plain words says the same verb or a question word. A
// tool whose action is the one asked for is the likelier of two tools about the same object.
type action uint8

const (
	noAction action = iota
	actCreate
	actUpdate
	actDelete
	actGet
	actList
	actSearch
	actRead // reads, without saying one or many ("show", "what", "which")
)

// actionWords classify words, as stems, by the action they ask for. Only words that are verbs
// in API vocabulary are here (not "check" or "post", which are as often things, nor "open" or
// "new", as often states: "open PRs").
var actionWords = func() map[string]action {
	out := map[string]action{}
	for a, words := range map[action]string{
		actCreate: "create add make insert register publish submit generate upload invite",
		actUpdate: "update edit modify change patch rename replace set move mark toggle enable disable assign rerun",
		actDelete: "delete remove destroy erase drop unset clear revoke kick expel unassign",
		actGet:    "get fetch read retrieve describe inspect download lookup",
		actList:   "list enumerate browse",
		actSearch: "search find query filter",
		actRead:   "show view see display who whom which what how",
	} {
		for _, w := range stems(words) {
			out[w] = a
		}
	}
	return out
}()

func (a action) reads() bool { return a >= actGet }

// writes is true of creating and updating, which are often one act: "add a label to an issue"
// updates the issue, "set the topics" creates them.
func (a action) writes() bool { return a == actCreate || a == actUpdate }

// agreement is how far a tool's action fits the query's: 1 the same, 0.5 both reading (a
// question may be answered by one thing or a list of them) or both writing, -1 when one
// reads and the other changes something, 0 otherwise or when either is unknown.
func agreement(query, tool action) float64 {
	switch {
	case query == noAction || tool == noAction:
		return 0
	case query == tool:
		return 1
	case query.reads() && tool.reads(), query.writes() && tool.writes():
		return 0.5
	case query.reads() != tool.reads():
		return -1 // reading asked, a change offered, or the other way round
	}
	return 0
}

// firstAction is the action of the first word of words that names one.
func firstAction(words []string) action {
	for _, w := range words {
		if a := actionWords[w]; a != noAction {
			return a
		}
	}
	return noAction
}

// queryAction is the action a request asks for: that of its first word naming one, function
// words included (so "who", "which" and "what" say it reads).
func queryAction(text string) action {
	var words []string
	for _, w := range split(describing(text)) {
		words = append(words, stem(strings.ToLower(w)))
	}
	return firstAction(words)
}

// toolAction is the action of a tool: that of its name's first word naming one (most names
// are verb + object), else of its summary's.
func toolAction(name, summary []string) action {
	if a := firstAction(name); a != noAction {
		return a
	}
	return firstAction(summary[:min(len(summary), 1)])
}
