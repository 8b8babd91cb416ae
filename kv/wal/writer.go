package wal

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"

	"github.com/strata-db/strata/kv/vfs"
)

// maxRetainedBuf is the largest buffer a Writer keeps after a flush. A
// larger one, grown for an unusually big batch of records, is dropped so
// that one huge record does not pin its memory for the life of the log.
const maxRetainedBuf = 4 << 20

// zeros supplies block padding.
var zeros [headerSize]byte

// Writer frames records into a log file. It buffers framed bytes in memory
// until Flush, Sync or Close hands them to the file in one Write.
//
// A Writer is not safe for concurrent use: one goroutine at a time (the
// engine serializes writes).
//
// After a Write or Sync of the file fails, the writer is failed: every later
// call returns that same error, and Close only closes the file. A failed
// fsync may have lost bytes that an earlier Write accepted, and retrying it
// could report success for data that is gone; the engine must start a new
// log instead.
type Writer struct {
	f    vfs.File
	name string
	id   uint32

	// buf holds framed bytes not yet handed to f. Its first byte belongs
	// at file offset written.
	buf []byte
	// written counts the bytes f.Write accepted.
	written int64
	// synced counts the bytes covered by the last successful f.Sync. It is
	// what the sync distance of each new chunk is measured from.
	synced int64

	err    error // sticky failure of Write or Sync
	closed bool
}

// NewWriter returns a writer that frames records into f, which must be empty
// and open for appending. name identifies the file in errors. The log ID
// stamped into every chunk is chosen at random, so that after a crash bytes
// left over from another log can never be read as part of this one; use
// [NewWriterLogID] to choose it.
func NewWriter(f vfs.File, name string) *Writer {
	id := rand.Uint32()
	for id == 0 {
		id = rand.Uint32()
	}
	return NewWriterLogID(f, name, id)
}

// NewWriterLogID is NewWriter with a chosen log ID, typically the low 32 bits
// of the log's file number, so that a reader created with [NewReaderLogID]
// can check that a file is the log it is meant to be.
func NewWriterLogID(f vfs.File, name string, id uint32) *Writer {
	return &Writer{f: f, name: name, id: id}
}

// LogID returns the log ID stamped into every chunk.
func (w *Writer) LogID() uint32 { return w.id }

// check returns the error every call must return, if any.
func (w *Writer) check() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return ErrClosed
	}
	return nil
}

// WriteRecord frames p into the writer's buffer and returns the file offset
// at which the record starts (its first chunk), or -1 and the writer's error.
// The record reaches the file at the next Flush, Sync or Close. p is copied
// and may be reused at once. Records of any length, including zero, may be
// written. In steady state WriteRecord allocates nothing: the buffer is
// reused from one flush to the next.
func (w *Writer) WriteRecord(p []byte) (int64, error) {
	if err := w.check(); err != nil {
		return -1, err
	}
	off := w.Size()
	if room := blockSize - int(off%blockSize); room < headerSize {
		w.buf = append(w.buf, zeros[:room]...)
		off += int64(room)
	}
	start := off
	w.buf = slices.Grow(w.buf, chunkedLen(off, len(p)))
	for first := true; ; first = false {
		room := blockSize - int(off%blockSize)
		n := min(len(p), room-headerSize)
		last := n == len(p)
		var t chunkType
		switch {
		case first && last:
			t = typeFull
		case first:
			t = typeFirst
		case last:
			t = typeLast
		default:
			t = typeMiddle
		}
		i := len(w.buf)
		w.buf = w.buf[:i+headerSize+n]
		copy(w.buf[i+headerSize:], p[:n])
		putHeader(w.buf[i:], off, t, w.id, syncDistance(off, w.synced))
		off += int64(headerSize + n)
		p = p[n:]
		if last {
			return start, nil
		}
	}
}

// chunkedLen returns how many bytes a record of n bytes takes when its first
// chunk starts at off, which leaves room for a header in its block.
func chunkedLen(off int64, n int) int {
	room := blockSize - int(off%blockSize) - headerSize
	if n <= room {
		return headerSize + n
	}
	n -= room
	full := (n + maxPayload - 1) / maxPayload // blocks after the first
	return headerSize + room + full*headerSize + n
}

// Flush hands every buffered byte to the file in one Write.
func (w *Writer) Flush() error {
	if err := w.check(); err != nil {
		return err
	}
	return w.flush()
}

func (w *Writer) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.f.Write(w.buf)
	if err == nil && n < len(w.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = fmt.Errorf("wal: %s: write of %d bytes at offset %d: %w", w.name, len(w.buf), w.written, err)
		w.written += int64(n)
		w.buf = w.buf[n:]
		return w.err
	}
	w.written += int64(n)
	w.buf = w.buf[:0]
	if cap(w.buf) > maxRetainedBuf {
		w.buf = nil
	}
	return nil
}

// Sync flushes the buffer and then syncs the file: when it returns nil,
// every record written so far survives a crash.
func (w *Writer) Sync() error {
	if err := w.check(); err != nil {
		return err
	}
	if err := w.flush(); err != nil {
		return err
	}
	return w.sync()
}

func (w *Writer) sync() error {
	if err := w.f.Sync(); err != nil {
		w.err = fmt.Errorf("wal: %s: sync at offset %d: %w", w.name, w.written, err)
		return w.err
	}
	w.synced = w.written
	return nil
}

// Size returns the length the file has once every buffered byte is written:
// bytes written plus bytes buffered.
func (w *Writer) Size() int64 { return w.written + int64(len(w.buf)) }

// Close flushes and syncs the log, then closes the file. The file is closed
// even when the writer has failed; the failure is returned. Every later call
// returns ErrClosed, or the failure.
func (w *Writer) Close() error {
	if err := w.check(); err != nil && w.closed {
		return err
	}
	w.closed = true
	err := w.err
	if err == nil {
		if err = w.flush(); err == nil {
			err = w.sync()
		}
	}
	if cerr := w.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("wal: %s: close: %w", w.name, cerr)
	}
	w.buf = nil
	return err
}
