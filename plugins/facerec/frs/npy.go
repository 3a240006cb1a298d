package frs

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// readNPY reads a NumPy .npy array of float64 ('<f8') or float32 ('<f4'),
// C or Fortran order, shape (N, D) or (D,), and returns its rows.
func readNPY(r io.Reader) ([][]float64, error) {
	br := bufio.NewReader(r)
	magic := make([]byte, 8)
	if _, err := io.ReadFull(br, magic); err != nil {
		return nil, fmt.Errorf("npy: read magic: %w", err)
	}
	if !bytes.Equal(magic[:6], []byte("\x93NUMPY")) {
		return nil, fmt.Errorf("npy: not a NumPy .npy file (bad magic)")
	}
	var hlen int
	switch magic[6] {
	case 1:
		var n uint16
		if err := binary.Read(br, binary.LittleEndian, &n); err != nil {
			return nil, fmt.Errorf("npy: header length: %w", err)
		}
		hlen = int(n)
	case 2, 3:
		var n uint32
		if err := binary.Read(br, binary.LittleEndian, &n); err != nil {
			return nil, fmt.Errorf("npy: header length: %w", err)
		}
		hlen = int(n)
	default:
		return nil, fmt.Errorf("npy: unsupported format version %d.%d", magic[6], magic[7])
	}
	if hlen > 1<<20 {
		return nil, fmt.Errorf("npy: header of %d bytes is implausible", hlen)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return nil, fmt.Errorf("npy: read header: %w", err)
	}
	descr, fortran, shape, err := parseNPYHeader(string(hdr))
	if err != nil {
		return nil, err
	}
	var size int
	var order binary.ByteOrder = binary.LittleEndian
	switch descr {
	case "<f8", "=f8", ">f8":
		size = 8
	case "<f4", "=f4", ">f4":
		size = 4
	default:
		return nil, fmt.Errorf("npy: dtype %q not supported (want float64 '<f8' or float32 '<f4')", descr)
	}
	if descr[0] == '>' {
		order = binary.BigEndian
	}
	var n, d int
	switch len(shape) {
	case 1:
		n, d = 1, shape[0]
	case 2:
		n, d = shape[0], shape[1]
	default:
		return nil, fmt.Errorf("npy: shape %v not supported (want (N, D) or (D,))", shape)
	}
	if n < 0 || d <= 0 || n*d > 1<<28 {
		return nil, fmt.Errorf("npy: shape %v not supported", shape)
	}
	raw := make([]byte, n*d*size)
	if _, err := io.ReadFull(br, raw); err != nil {
		return nil, fmt.Errorf("npy: data for shape %v: %w", shape, err)
	}
	at := func(k int) float64 {
		if size == 8 {
			return math.Float64frombits(order.Uint64(raw[8*k:]))
		}
		return float64(math.Float32frombits(order.Uint32(raw[4*k:])))
	}
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = make([]float64, d)
		for j := range rows[i] {
			if fortran {
				rows[i][j] = at(j*n + i)
			} else {
				rows[i][j] = at(i*d + j)
			}
		}
	}
	return rows, nil
}

var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

func parseNPYHeader(h string) (descr string, fortran bool, shape []int, err error) {
	m := npyDescr.FindStringSubmatch(h)
	f := npyFortran.FindStringSubmatch(h)
	s := npyShape.FindStringSubmatch(h)
	if m == nil || f == nil || s == nil {
		return "", false, nil, fmt.Errorf("npy: malformed header %q", h)
	}
	for _, part := range strings.Split(s[1], ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, err := strconv.Atoi(part)
		if err != nil {
			return "", false, nil, fmt.Errorf("npy: malformed shape %q", s[1])
		}
		shape = append(shape, k)
	}
	return m[1], f[1] == "True", shape, nil
}

// WriteNPY writes rows (all of one length D) as a float64 C-order .npy
// file of shape (N, D), readable by numpy.load.
func WriteNPY(path string, rows [][]float64) error {
	d := 0
	if len(rows) > 0 {
		d = len(rows[0])
	}
	var buf bytes.Buffer
	hdr := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", len(rows), d)
	// Pad so that magic(6)+version(2)+len(2)+header is a multiple of 64,
	// ending in '\n', as NumPy does.
	pad := 64 - (10+len(hdr)+1)%64
	if pad == 64 {
		pad = 0
	}
	hdr += strings.Repeat(" ", pad) + "\n"
	buf.WriteString("\x93NUMPY\x01\x00")
	_ = binary.Write(&buf, binary.LittleEndian, uint16(len(hdr)))
	buf.WriteString(hdr)
	for i, r := range rows {
		if len(r) != d {
			return fmt.Errorf("npy: row %d has %d values, want %d", i, len(r), d)
		}
		for _, x := range r {
			_ = binary.Write(&buf, binary.LittleEndian, x)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	return nil
}
