package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// sqlProgress draws a one-line progress bar on a terminal, redrawn from its
// own goroutine a few times a second:
//
//	load sbtest        [#########-----------]  45%   450000/1000000  85.1k/s
//
// A phase bounded by time shows the elapsed time against its duration.
// stop erases the line. A nil *sqlProgress does nothing.
type sqlProgress struct {
	w        io.Writer
	name     string
	total    int64
	duration time.Duration
	start    time.Time
	done     atomic.Int64
	once     sync.Once
	quit     chan struct{}
	exited   chan struct{}
}

// sqlIsTerminal reports whether f is a character device (a terminal).
func sqlIsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// startSQLProgress starts a bar for total units (or, with total 0, for
// duration); a nil w gives a nil bar.
func startSQLProgress(w io.Writer, name string, total int64, duration time.Duration) *sqlProgress {
	if w == nil {
		return nil
	}
	p := &sqlProgress{w: w, name: name, total: total, duration: duration, start: time.Now(),
		quit: make(chan struct{}), exited: make(chan struct{})}
	go p.loop()
	return p
}

func (p *sqlProgress) add(n int64) {
	if p != nil {
		p.done.Add(n)
	}
}

func (p *sqlProgress) loop() {
	defer close(p.exited)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 79))
			return
		case <-t.C:
			p.draw()
		}
	}
}

func (p *sqlProgress) draw() {
	const width = 20
	elapsed := time.Since(p.start)
	done := p.done.Load()
	frac := 0.0
	switch {
	case p.total > 0:
		frac = float64(done) / float64(p.total)
	case p.duration > 0:
		frac = elapsed.Seconds() / p.duration.Seconds()
	}
	frac = min(max(frac, 0), 1)
	cells := int(frac * width)
	bar := strings.Repeat("#", cells) + strings.Repeat("-", width-cells)
	rate := float64(done) / max(elapsed.Seconds(), 1e-9)
	var count string
	if p.total > 0 {
		count = fmt.Sprintf("%d/%d", done, p.total)
	} else {
		count = fmt.Sprintf("%.0fs/%.0fs", elapsed.Seconds(), p.duration.Seconds())
	}
	fmt.Fprintf(p.w, "\r%-18s [%s] %3.0f%%  %s  %.1fk/s ", p.name, bar, 100*frac, count, rate/1000)
}

// stop erases the bar.
func (p *sqlProgress) stop() {
	if p == nil {
		return
	}
	p.once.Do(func() {
		close(p.quit)
		<-p.exited
	})
}
