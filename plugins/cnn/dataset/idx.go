package dataset

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// idx is the content of an IDX file (the MNIST family's format): a
// big-endian header — two zero bytes, a type byte (0x08 = unsigned byte,
// the only type read here), the number of dimensions, then each dimension as
// a uint32 — followed by the values in row-major order.
type idx struct {
	Dims []int
	Data []byte
}

// maxIDXValues bounds the size an IDX header may announce (1 GiB), so a
// corrupt header cannot make the reader allocate without limit.
const maxIDXValues = 1 << 30

// readIDX reads an unsigned-byte IDX stream, gzip-compressed or not (a gzip
// stream is recognised by its magic bytes 1f 8b). It fails on a wrong magic
// number, a truncated body or trailing bytes.
func readIDX(r io.Reader) (*idx, error) {
	br := bufio.NewReader(r)
	if head, err := br.Peek(2); err == nil && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("idx: gzip header: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	var magic [4]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil {
		return nil, fmt.Errorf("idx: header: %w", truncated(err))
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, fmt.Errorf("idx: wrong magic number % x (an IDX file starts with 00 00 08 <ndims>)", magic)
	}
	if magic[2] != 0x08 {
		return nil, fmt.Errorf("idx: value type 0x%02x not supported (only unsigned bytes, 0x08)", magic[2])
	}
	nd := int(magic[3])
	if nd < 1 || nd > 4 {
		return nil, fmt.Errorf("idx: %d dimensions, want 1 to 4", nd)
	}
	dims := make([]int, nd)
	total := 1
	for i := range dims {
		var d uint32
		if err := binary.Read(br, binary.BigEndian, &d); err != nil {
			return nil, fmt.Errorf("idx: dimension %d: %w", i, truncated(err))
		}
		dims[i] = int(d)
		if d == 0 || total > maxIDXValues/int(d) {
			return nil, fmt.Errorf("idx: dimensions %v: empty or larger than %d values", dims[:i+1], maxIDXValues)
		}
		total *= int(d)
	}
	data := make([]byte, total)
	if n, err := io.ReadFull(br, data); err != nil {
		return nil, fmt.Errorf("idx: body of %v: got %d of %d bytes: %w", dims, n, total, truncated(err))
	}
	if n, _ := io.Copy(io.Discard, br); n > 0 {
		return nil, fmt.Errorf("idx: %d trailing bytes after the %v values", n, dims)
	}
	return &idx{Dims: dims, Data: data}, nil
}

// truncated turns io.EOF into io.ErrUnexpectedEOF: in the middle of a file
// both mean it was cut short.
func truncated(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
