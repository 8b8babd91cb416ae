// Package meter shows and measures a benchmark's progress for sqlbench's
// subcommands: a progress bar on a terminal and the process's and
// threads' CPU clocks.
package meter

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Bar draws a one-line progress bar for a benchmark phase (kv or sql) on a
// terminal, redrawn a few times a second from its own goroutine:
//
//	fillrandom   [#########-----------]  45%   450000/1000000 ops  351.2k ops/s  ETA 1.6s
//
// Threads report finished operations with Add, in chunks (kvThread batches
// them), so the bar costs the hot loops one atomic add per chunk. A phase
// bounded by time (-duration) shows elapsed against the duration instead of
// operations. Stop erases the line, so that report lines print cleanly.
type Bar struct {
	w        io.Writer
	name     string
	total    int64         // operations expected; 0 when unknown
	duration time.Duration // the phase's time limit, or 0
	start    time.Time
	done     atomic.Int64

	stopOnce sync.Once
	quit     chan struct{}
	exited   chan struct{}
}

// progressInterval is the redraw period.
const progressInterval = 200 * time.Millisecond

// progressWidth is the number of cells in the bar.
const progressWidth = 20

// IsTerminal reports whether f is a character device (a terminal).
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Start starts drawing to w; a nil w gives a nil *Bar,
// whose methods do nothing.
func Start(w io.Writer, name string, total int64, duration time.Duration) *Bar {
	if w == nil {
		return nil
	}
	p := &Bar{
		w: w, name: name, total: total, duration: duration, start: time.Now(),
		quit: make(chan struct{}), exited: make(chan struct{}),
	}
	go p.loop()
	return p
}

// Add counts n finished operations. Safe for concurrent use.
func (p *Bar) Add(n int64) {
	if p != nil {
		p.done.Add(n)
	}
}

// Stop stops drawing and erases the bar.
func (p *Bar) Stop() {
	if p == nil {
		return
	}
	p.stopOnce.Do(func() { close(p.quit) })
	<-p.exited
}

func (p *Bar) loop() {
	defer close(p.exited)
	t := time.NewTicker(progressInterval)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			fmt.Fprint(p.w, "\r\033[K")
			return
		case now := <-t.C:
			fmt.Fprint(p.w, "\r"+p.line(p.done.Load(), now.Sub(p.start))+"\033[K")
		}
	}
}

// line renders the bar for done operations after elapsed time.
func (p *Bar) line(done int64, elapsed time.Duration) string {
	frac := -1.0 // unknown
	switch {
	case p.duration > 0:
		frac = elapsed.Seconds() / p.duration.Seconds()
	case p.total > 0:
		frac = float64(done) / float64(p.total)
	}
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done) / elapsed.Seconds()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s ", p.name)
	if frac >= 0 {
		frac = min(frac, 1)
		filled := int(frac * progressWidth)
		fmt.Fprintf(&b, "[%s%s] %3d%%  ", strings.Repeat("#", filled), strings.Repeat("-", progressWidth-filled), int(frac*100))
	}
	if p.total > 0 && p.duration == 0 {
		fmt.Fprintf(&b, "%d/%d ops", done, p.total)
	} else {
		fmt.Fprintf(&b, "%d ops", done)
	}
	fmt.Fprintf(&b, "  %s ops/s", humanRate(rate))
	switch {
	case p.duration > 0:
		fmt.Fprintf(&b, "  %s of %s", elapsed.Round(time.Second), p.duration)
	case frac > 0 && frac < 1:
		eta := time.Duration(float64(elapsed) * (1 - frac) / frac)
		fmt.Fprintf(&b, "  ETA %s", eta.Round(100*time.Millisecond))
	}
	return b.String()
}

// humanRate renders a rate with a k or M suffix.
func humanRate(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
