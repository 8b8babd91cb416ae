package wal

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/strata-db/strata/kv/vfs"
)

// maxRetainedBuf is the largest buffer a Writer keeps after a flush. A
// larger one, grown for an unusually big batch of records, is dropped so
// that one huge record does not pin its memory for the life of the log.
const maxRetainedBuf = 16 << 20

// initialBuf is the smallest capacity a buffer grows to.
const initialBuf = 256 << 10

// zeros supplies block padding.
var zeros [headerSize]byte

// Writer frames records into a log file. It buffers framed bytes in memory
// until Flush, Sync or Close hands them to the file in one Write.
//
// One goroutine may append records (WriteRecord) while another flushes or
// syncs: Flush takes the buffered bytes and writes them without holding the
// lock WriteRecord needs, so a background flusher never stalls the appender
// on a write system call. Calls of each kind must come from one goroutine at
// a time (the engine has one commit leader and one flusher).
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

	// flushMu serializes the hand-over of bytes to the file: Flush, Sync
	// and Close. Lock order: flushMu before mu.
	flushMu sync.Mutex

	// mu guards the fields below.
	mu sync.Mutex
	// buf holds framed bytes not yet taken by a flush. Its first byte
	// belongs at file offset size-len(buf).
	buf []byte
	// spare is the buffer a flush gave back, reused by the next swap.
	spare []byte
	// size is the length of the log once every framed byte is written.
	size int64
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

// checkLocked returns the error every call must return, if any.
// REQUIRES: w.mu held.
func (w *Writer) checkLocked() error {
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
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.checkLocked(); err != nil {
		return -1, err
	}
	off := w.size
	if room := blockSize - int(off%blockSize); room < headerSize {
		w.buf = append(w.buf, zeros[:room]...)
		off += int64(room)
	}
	start := off
	if need := chunkedLen(off, len(p)); cap(w.buf)-len(w.buf) < need {
		// Grow at least to initialBuf and then by doubling, so that a
		// buffer taken by a flush and replaced by a fresh one does not
		// regrow from nothing in small steps.
		w.buf = slices.Grow(w.buf, max(need, initialBuf, cap(w.buf)))
	}
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
			w.size = off
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
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	return w.flushLocked()
}

// flushLocked takes the buffer and writes it without holding w.mu, so that
// WriteRecord can go on filling a new buffer meanwhile.
// REQUIRES: w.flushMu held.
func (w *Writer) flushLocked() error {
	w.mu.Lock()
	if err := w.checkLocked(); err != nil {
		w.mu.Unlock()
		return err
	}
	taken := w.buf
	w.buf, w.spare = w.spare[:0], nil
	w.mu.Unlock()
	if len(taken) == 0 {
		w.mu.Lock()
		w.spare = taken
		w.mu.Unlock()
		return nil
	}

	n, err := w.f.Write(taken)
	if err == nil && n < len(taken) {
		err = io.ErrShortWrite
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.err = fmt.Errorf("wal: %s: write of %d bytes at offset %d: %w", w.name, len(taken), w.written, err)
		w.written += int64(n)
		return w.err
	}
	w.written += int64(n)
	if cap(taken) <= maxRetainedBuf {
		w.spare = taken[:0]
	}
	return nil
}

// Sync flushes the buffer and then syncs the file: when it returns nil,
// every record written so far survives a crash.
func (w *Writer) Sync() error {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	if err := w.flushLocked(); err != nil {
		return err
	}
	return w.syncLocked()
}

// syncLocked syncs the file. REQUIRES: w.flushMu held.
func (w *Writer) syncLocked() error {
	w.mu.Lock()
	written := w.written
	w.mu.Unlock()
	err := w.f.Sync()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.err = fmt.Errorf("wal: %s: sync at offset %d: %w", w.name, written, err)
		return w.err
	}
	w.synced = written
	return nil
}

// Buffered returns the number of framed bytes not yet taken by a flush.
func (w *Writer) Buffered() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.buf)
}

// Size returns the length the file has once every buffered byte is written:
// bytes written plus bytes buffered.
func (w *Writer) Size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.size
}

// Close flushes and syncs the log, then closes the file. The file is closed
// even when the writer has failed; the failure is returned. Every later call
// returns ErrClosed, or the failure.
func (w *Writer) Close() error {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	w.mu.Lock()
	if w.closed {
		err := w.checkLocked()
		w.mu.Unlock()
		return err
	}
	failed := w.err
	w.mu.Unlock()
	err := failed
	if err == nil {
		if err = w.flushLocked(); err == nil {
			err = w.syncLocked()
		}
	}
	w.mu.Lock()
	w.closed = true
	w.buf, w.spare = nil, nil
	w.mu.Unlock()
	if cerr := w.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("wal: %s: close: %w", w.name, cerr)
	}
	return err
}
