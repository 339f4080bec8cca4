package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// Row is one line of the table.
type Row struct {
	Figure string `json:"figure"`
	// Value is codemode's figure and Floor the floor it is compared with,
	// both in Unit ("µs" or "ms" per op, "/s" for throughput, "s" of wall clock,
	// "MB" of memory, "tokens" of o200k text, or "recall", a share of
	// tasks); Floor is 0 when the row has no floor.
	Value     float64 `json:"codemode"`
	Floor     float64 `json:"floor,omitempty"`
	FloorName string  `json:"floor_name,omitempty"`
	Unit      string  `json:"unit"`
	// Ratio is Value ÷ Floor (0 when there is no floor).
	Ratio  float64 `json:"ratio,omitempty"`
	Target string  `json:"target,omitempty"`
	// Result is "met", "missed", "skipped" or "" (a figure without a target).
	Result string `json:"result,omitempty"`
	// AllocsPerOp is codemode's median allocations per op, when measured.
	AllocsPerOp float64 `json:"allocs_per_op,omitempty"`
	Note        string  `json:"note,omitempty"`
}

// Report is the whole output of a run.
type Report struct {
	Machine Machine `json:"machine"`
	Rows    []Row   `json:"rows"`
}

func (r Row) withRatio() Row {
	if r.Floor > 0 {
		r.Ratio = r.Value / r.Floor
	}
	return r
}

// judge sets Result from ok (when the row has a target).
func (r Row) judge(ok bool) Row {
	if ok {
		r.Result = "met"
	} else {
		r.Result = "missed"
	}
	return r
}

func skipped(figure, why string) Row {
	return Row{Figure: figure, Result: "skipped", Note: why}
}

// formatValue prints a value in its unit with sensible precision.
func formatValue(v float64, unit string) string {
	switch unit {
	case "/s":
		return groupThousands(math.Round(v)) + "/s"
	case "tokens":
		return groupThousands(math.Round(v)) + " tokens"
	case "recall":
		return fmt.Sprintf("%.3f", v)
	case "s":
		return fmt.Sprintf("%.2f s", v)
	case "ms":
		if v >= 100 {
			return groupThousands(math.Round(v)) + " ms"
		}
		return fmt.Sprintf("%.1f ms", v)
	case "MB":
		return groupThousands(math.Round(v)) + " MB"
	default:
		if v >= 1000 {
			return groupThousands(math.Round(v)) + " µs"
		}
		return threeFigures(v) + " µs"
	}
}

func groupThousands(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func formatRatio(r float64) string {
	switch {
	case r == 0:
		return "—"
	case r < 0.01:
		return fmt.Sprintf("%.2g×", r) // two significant digits: 0.0012×
	default:
		return threeFigures(r) + "×"
	}
}

// threeFigures prints v with fewer decimals as it grows: two below 10, one
// below 100, none from there.
func threeFigures(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// writeTable prints the report as an aligned text table (also valid as
// the body of a Markdown table with -markdown).
func writeTable(w io.Writer, rep Report, markdown bool) error {
	header := []string{"figure", "codemode", "floor", "ratio", "target", "result"}
	lines := [][]string{header}
	for _, r := range rep.Rows {
		if r.Result == "skipped" {
			lines = append(lines, []string{r.Figure, "—", "—", "—", "—", "skipped: " + r.Note})
			continue
		}
		floor := "—"
		if r.Floor > 0 {
			floor = formatValue(r.Floor, r.Unit)
			if r.FloorName != "" {
				floor += " (" + r.FloorName + ")"
			}
		}
		result := r.Result
		if result == "" {
			result = "—"
		}
		if r.Note != "" {
			result += " (" + r.Note + ")"
		}
		target := r.Target
		if target == "" {
			target = "—"
		}
		lines = append(lines, []string{r.Figure, formatValue(r.Value, r.Unit), floor, formatRatio(r.Ratio), target, result})
	}
	if markdown {
		for i, l := range lines {
			if _, err := fmt.Fprintf(w, "| %s |\n", strings.Join(l, " | ")); err != nil {
				return err
			}
			if i == 0 {
				if _, err := fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(l))); err != nil {
					return err
				}
			}
		}
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, l := range lines {
			fmt.Fprintln(tw, strings.Join(l, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	m := rep.Machine
	_, err := fmt.Fprintf(w, "\n%d CPUs, %s, %s, %s; load average %s before, %s after\n",
		m.CPUs, m.CPUModel, m.GoVersion, m.OS, m.LoadBefore, m.LoadAfter)
	return err
}

func writeJSON(w io.Writer, rep Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
