package githubapi

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"unicode"
)

// Task is a labeled need: what a model has in mind when it looks for a tool,
// and the tool names that serve it (any one of them is a hit).
type Task struct {
	Task string   `json:"task"`
	Want []string `json:"want"`
}

const tasksFile = "catalog/testdata/tasks.json"

// LoadTasks reads catalog/testdata/tasks.json. Its names are api.github.com
// names as Tools gives them; Qualify adapts them to ToolsN's larger catalogs.
func LoadTasks() ([]Task, error) {
	path, err := fromRoot(tasksFile)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("githubapi: %w", err)
	}
	var tasks []Task
	if err := json.Unmarshal(b, &tasks); err != nil {
		return nil, fmt.Errorf("githubapi: %s: %w", tasksFile, err)
	}
	for i, t := range tasks {
		if t.Task == "" || len(t.Want) == 0 {
			return nil, fmt.Errorf("githubapi: %s: task %d has no text or no wanted tool", tasksFile, i)
		}
	}
	return tasks, nil
}

// Qualify returns the tasks with each wanted name replaced by prefix+name
// for every prefix: Qualify(tasks, "github.") scores against ToolsN's
// api.github.com group only, Qualify(tasks, "github.", "ghes.") accepts
// either server's copy.
func Qualify(tasks []Task, prefixes ...string) []Task {
	out := make([]Task, len(tasks))
	for i, t := range tasks {
		out[i] = Task{Task: t.Task}
		for _, p := range prefixes {
			for _, w := range t.Want {
				out[i].Want = append(out[i].Want, p+w)
			}
		}
	}
	return out
}

// Recall scores a ranker: at1 is the share of tasks whose first result is
// wanted, at5 the share with a wanted tool among the first five; misses are
// the tasks with none in the first five.
func Recall(tasks []Task, rank func(query string, k int) []string) (at1, at5 float64, misses []Task) {
	if len(tasks) == 0 {
		return 0, 0, nil
	}
	var hits1, hits5 int
	for _, t := range tasks {
		got := rank(t.Task, 5)
		pos := slices.IndexFunc(got[:min(len(got), 5)], func(name string) bool { return slices.Contains(t.Want, name) })
		switch {
		case pos == 0:
			hits1++
			hits5++
		case pos > 0:
			hits5++
		default:
			misses = append(misses, t)
		}
	}
	n := float64(len(tasks))
	return float64(hits1) / n, float64(hits5) / n, misses
}

// BM25 is the floor ranker: Okapi BM25 (k1 = 1.2, b = 0.75) over one field,
// a tool's name and description, as lower-cased runs of letters and digits;
// no stemming, no camelCase split, no field weights. The returned function
// gives the names of the k best tools, best first, ties in catalog order;
// tools that share no word with the query are left out.
func BM25(tools []Tool) func(query string, k int) []string {
	const k1, b = 1.2, 0.75
	type posting struct{ doc, tf int }
	index := map[string][]posting{}
	lengths := make([]float64, len(tools))
	var total float64
	for i, t := range tools {
		words := tokens(t.Name + " " + t.Description)
		lengths[i] = float64(len(words))
		total += lengths[i]
		tf := map[string]int{}
		for _, w := range words {
			tf[w]++
		}
		for w, n := range tf {
			index[w] = append(index[w], posting{i, n})
		}
	}
	n := float64(len(tools))
	avg := total / max(n, 1)
	return func(query string, k int) []string {
		scores := map[int]float64{}
		for _, w := range tokens(query) {
			list := index[w]
			df := float64(len(list))
			idf := math.Log((n-df+0.5)/(df+0.5) + 1)
			for _, p := range list {
				tf := float64(p.tf)
				scores[p.doc] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*lengths[p.doc]/avg))
			}
		}
		docs := make([]int, 0, len(scores))
		for d := range scores {
			docs = append(docs, d)
		}
		slices.SortFunc(docs, func(x, y int) int {
			if scores[x] != scores[y] {
				if scores[x] > scores[y] {
					return -1
				}
				return 1
			}
			return x - y
		})
		names := make([]string, 0, min(k, len(docs)))
		for _, d := range docs[:min(k, len(docs))] {
			names = append(names, tools[d].Name)
		}
		return names
	}
}

// tokens lower-cases s and splits it into runs of letters and digits.
func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
