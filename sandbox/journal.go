package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// A journal is what one execution of a program observed that is not a function of its source
// and its calls' settlements: its start on the wall clock, the seed of its randomness
// (Math.random, crypto.getRandomValues, crypto.randomUUID), every reading of its clock (Date,
// performance.now, console.time, the due times of timers), and the order in which its loop ran
// the jobs that came from outside (a call's settlement applied, due timers collected) among
// its own (an immediate, a timer callback). Replaying a journal (see [Replayer]) makes a fresh
// run of the same program, given the same settlements, do exactly what the recorded one did up
// to the journal's end; past it the run goes on live, recording.
//
// On the wire a journal is text: tokens separated by single spaces, in the order observed.
//
//	T<unix ns>  the run's start (first entry)
//	R<hex>      the 32-byte seed of its randomness (second entry)
//	c<µs>       a clock reading, microseconds since the start
//	i<n>        n of the run's own jobs ran
//	s<seq>      the settlement of call seq (Call.Seq) was applied
//	d<µs>       due timers were collected at µs since the start
//	X           the journal outgrew MaxJournalBytes: it cannot be replayed
//
// A run hands its journal out in pieces, each new since the last: with each Call
// (Call.Journal) and with its Result (Result.Journal). Their concatenation in order is the
// journal. A run replaying a journal of n tokens hands out only what comes after them.

// MaxJournalBytes bounds a run's journal. A program that reads the clock in a tight loop past
// it can no longer be replayed (its journal ends with X); it runs on unaffected.
const MaxJournalBytes = 4 << 20

// Replayer is a Host that keeps its run's journal: the run records it (Call.Journal,
// Result.Journal; a run with another Host records nothing and draws its randomness from the
// system) and, when Journal is not empty, first replays that earlier execution of the same
// program (the concatenation of its pieces). The calls the replaying run makes must be the
// calls the host settles as before, and the host must settle each replayed call with its
// earlier settlement. A run that does otherwise than the journal says (reads the clock more
// often, fires a timer it did not, …) fails with kind "diverged".
type Replayer interface {
	Host
	Journal() string
}

// KindDiverged is the failure of a run that replayed a journal and did otherwise than it says.
const KindDiverged = "diverged"

// entry is one journal token.
type entry struct {
	kind byte
	n    int64
}

// journal is a run's recorder and, when it resumes an execution, its replayer. Fields belong
// to the VM goroutine.
type journal struct {
	start time.Time      // the run's start; monotonic when recorded live
	rng   *mrand.ChaCha8 // nil when the run keeps no journal: the system's randomness
	off   bool           // the run keeps no journal

	out   strings.Builder // tokens recorded and not yet handed out
	size  int             // bytes recorded in all
	over  bool            // past MaxJournalBytes: X recorded, nothing more
	idle  int64           // own jobs run since the last entry, not yet recorded
	clock int64           // the last clock reading, µs since start (readings never go back)

	in  []entry // the journal being replayed; nil when live
	pos int     // the next entry of in to replay
}

// begin starts the journal: off when the host keeps none; else a fresh start and seed when
// text is empty, or text's, to be replayed.
func (j *journal) begin(text string, keep bool) error {
	*j = journal{}
	if !keep {
		j.start, j.off = time.Now(), true
		return nil
	}
	if text == "" {
		var seed [32]byte
		_, _ = rand.Read(seed[:])
		j.start = time.Now()
		j.rng = mrand.NewChaCha8(seed)
		j.out.WriteString("T" + strconv.FormatInt(j.start.UnixNano(), 10) + " R" + hex.EncodeToString(seed[:]))
		j.size = j.out.Len()
		return nil
	}
	toks, seed, start, err := parseJournal(text)
	if err != nil {
		return err
	}
	j.start = start
	j.rng = mrand.NewChaCha8(seed)
	j.in = toks
	j.size = len(text)
	return nil
}

// parseJournal reads a journal's text: its tokens after the start and seed.
func parseJournal(text string) ([]entry, [32]byte, time.Time, error) {
	var seed [32]byte
	fields := strings.Split(text, " ")
	if len(fields) < 2 || len(fields[0]) < 2 || fields[0][0] != 'T' || len(fields[1]) != 65 || fields[1][0] != 'R' {
		return nil, seed, time.Time{}, errors.New("the journal does not start with its start time and seed")
	}
	ns, err := strconv.ParseInt(fields[0][1:], 10, 64)
	if err != nil {
		return nil, seed, time.Time{}, fmt.Errorf("the journal's start time %q is not a number", fields[0])
	}
	if _, err := hex.Decode(seed[:], []byte(fields[1][1:])); err != nil {
		return nil, seed, time.Time{}, errors.New("the journal's seed is not 32 bytes of hex")
	}
	toks := make([]entry, 0, len(fields)-2)
	for _, f := range fields[2:] {
		if f == "X" {
			return nil, seed, time.Time{}, errors.New("the journal outgrew its bound: the run cannot be replayed")
		}
		if len(f) < 2 || !strings.ContainsRune("cisd", rune(f[0])) {
			return nil, seed, time.Time{}, fmt.Errorf("the journal has an unknown entry %q", f)
		}
		n, err := strconv.ParseInt(f[1:], 10, 64)
		if err != nil || n < 0 || (f[0] == 'i' || f[0] == 's') && n == 0 {
			return nil, seed, time.Time{}, fmt.Errorf("the journal has a bad entry %q", f)
		}
		toks = append(toks, entry{f[0], n})
	}
	return toks, seed, time.Unix(0, ns), nil
}

// replaying reports whether tokens remain to be replayed.
func (j *journal) replaying() bool { return j.pos < len(j.in) }

// peek is the next entry to replay.
func (j *journal) peek() entry { return j.in[j.pos] }

// advance consumes one unit of the next entry: one of i<n>'s jobs, or the whole entry.
func (j *journal) advance() {
	if t := &j.in[j.pos]; t.kind == 'i' && t.n > 1 {
		t.n--
		return
	}
	j.pos++
}

// record appends a entry to what is handed out next, unless it is being replayed (then the
// holder of the journal has it already) or the journal is over its bound.
func (j *journal) record(kind byte, n int64) {
	if j.replaying() || j.over || j.off {
		return
	}
	if kind != 'i' && j.idle > 0 {
		idle := j.idle
		j.idle = 0
		j.record('i', idle)
	}
	s := string(kind) + strconv.FormatInt(n, 10)
	if j.size+len(s)+1 > MaxJournalBytes {
		j.over = true
		s = "X"
	}
	j.out.WriteByte(' ') // the header always comes first
	j.size++
	j.out.WriteString(s)
	j.size += len(s)
}

// ownJob counts one of the run's own jobs: recorded as i<n> before the next other entry.
func (j *journal) ownJob() {
	if !j.replaying() && !j.over && !j.off {
		j.idle++
	}
}

// take hands out what was recorded since the last take (pending own jobs included).
func (j *journal) take() string {
	if j.idle > 0 && !j.replaying() {
		idle := j.idle
		j.idle = 0
		j.record('i', idle)
	}
	s := j.out.String()
	j.out.Reset()
	return s
}

// elapsed is the live clock: µs since the start, never less than the last reading. A resumed
// run's start has no monotonic reading, so its clock is the wall clock's.
func (j *journal) elapsed() int64 {
	return max(j.clock, time.Since(j.start).Microseconds())
}

// now is the program's clock (platformHost): the next reading of the journal being
// replayed, else the live clock's, recorded. A run that reads the clock where the journal
// has something else diverged.
func (r *run) now() time.Time {
	j := &r.jr
	if !j.replaying() {
		j.clock = j.elapsed()
		j.record('c', j.clock)
		return j.start.Add(time.Duration(j.clock) * time.Microsecond)
	}
	if t := j.peek(); t.kind == 'c' {
		j.clock = t.n
		j.advance()
		r.replayed()
	} else {
		r.diverged(fmt.Sprintf("the program read the clock where it did not before (the log has %s next)", t))
	}
	return j.start.Add(time.Duration(j.clock) * time.Microsecond)
}

// loopTime is the clock of the timers (platformHost): read once per job, when
// the job first sets a timer, as libuv's loop time is read once per turn of
// Node's loop, so that the timers a job sets count from one instant and fire
// in the order of their delays.
func (r *run) loopTime() time.Time {
	if r.loopAt.IsZero() || r.loopJob != r.jobs {
		r.loopAt, r.loopJob = r.now(), r.jobs
	}
	return r.loopAt
}

// random is Math.random: 53 bits of the run's seeded generator, or of the system's.
func (r *run) random() float64 {
	if r.jr.rng == nil {
		return mrand.Float64()
	}
	return float64(r.jr.rng.Uint64()>>11) / (1 << 53)
}

// randomBytes fills b from the run's seeded generator, or the system's (platformHost):
// crypto's randomness.
func (r *run) randomBytes(b []byte) {
	if r.jr.rng == nil {
		_, _ = rand.Read(b)
		return
	}
	_, _ = r.jr.rng.Read(b)
}

// replayingJournal reports whether the run is replaying a journal (platformHost): timers
// then fire when the journal says, not when the Go clock does.
func (r *run) replayingJournal() bool { return r.jr.replaying() }

// noted records that the loop runs j: a settlement or the collection of due timers by name,
// and time, any other job as one of the run's own. It returns j.
func (r *run) noted(j job) job {
	switch j := j.(type) {
	case *pendingCall:
		r.jr.record('s', int64(j.seq))
	case *dueJob:
		r.jr.clock = r.jr.elapsed()
		r.jr.record('d', r.jr.clock)
		j.at = r.jr.start.Add(time.Duration(r.jr.clock) * time.Microsecond)
	default:
		r.jr.ownJob()
	}
	return j
}

// replayJob runs the job the journal names next: the next of the run's own jobs, a call's
// settlement (waiting for the host to settle it), or the collection of the timers due at the
// journal's time. It reports whether the run goes on.
func (r *run) replayJob() bool {
	t := r.jr.peek()
	switch t.kind {
	case 'i':
		j := r.takeQueued(func(j job) bool { return !isOutside(j) })
		if j == nil {
			return r.diverged("the program has no timer callback or immediate ready where it had one before")
		}
		r.jr.advance()
		r.replayed()
		return r.enter(j)
	case 's':
		j := r.takeQueued(func(j job) bool { c, ok := j.(*pendingCall); return ok && int64(c.seq) == t.n })
		if j != nil {
			r.jr.advance()
			r.replayed()
			return r.enter(j)
		}
		if t.n > int64(r.calls) {
			return r.diverged(fmt.Sprintf("the program has not made call %d where the log has its result", t.n))
		}
		if r.releaseHeld(true) {
			return true // the call ran here: its settlement is queued
		}
		r.idle.Store(true)
		<-r.wake
		r.idle.Store(false)
		r.ranJS.Store(true)
		return true
	case 'd':
		r.jr.advance()
		r.jr.clock = max(r.jr.clock, t.n)
		r.replayed()
		return r.enter(&dueJob{ts: &r.timers, at: r.jr.start.Add(time.Duration(t.n) * time.Microsecond)})
	default:
		return r.diverged(fmt.Sprintf("the program did not read the clock where it did before (the log has %s next)", t))
	}
}

// replayed is called after each entry replayed: at the journal's end the run goes live, and
// the timers it scheduled meanwhile start to wait on the Go clock.
func (r *run) replayed() {
	if !r.jr.replaying() {
		r.timers.arm()
	}
}

// takeQueued removes and returns the first queued job that match accepts; nil when none does.
func (r *run) takeQueued(match func(job) bool) job {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, j := range r.queue {
		if match(j) {
			r.queue = append(r.queue[:i], r.queue[i+1:]...)
			return j
		}
	}
	return nil
}

// isOutside reports whether j came from outside the program: a settlement, or the alarm of due
// timers.
func isOutside(j job) bool {
	switch j.(type) {
	case *pendingCall, *dueJob:
		return true
	}
	return false
}

// diverged fails the run: it did otherwise than the journal it replays. It reports false.
func (r *run) diverged(what string) bool {
	r.fail(&Failure{Kind: KindDiverged, Message: "the resumed program did not repeat what it did before: " + what})
	return false
}

func (t entry) String() string {
	switch t.kind {
	case 'c':
		return "a clock reading"
	case 'i':
		return "a timer callback or immediate"
	case 's':
		return fmt.Sprintf("the result of call %d", t.n)
	case 'd':
		return "a timer's firing"
	}
	return string(t.kind)
}
