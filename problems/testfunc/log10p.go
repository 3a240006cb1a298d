package testfunc

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// File names of the log10P data set inside its directory (the layout of the
// paper's release of the Broom's Barn survey, which is not part of this
// repository).
const (
	Log10PInputsFile  = "X_log10P.txt"               // n rows, 2 columns: locations in [0,1]²
	Log10POutputsFile = "Y_log10P.txt"               // n rows, 1 column: centred log10 P
	Log10PHyperFile   = "hyperparameters_log10P.txt" // σ_s², 1/ℓ₁², 1/ℓ₂², σ_n², one per line
)

// Log10P returns the paper's log10P objective (§5.1): the posterior mean of
// a zero-mean GP with SE kernel k(x, x') = σ_s² exp(−½ Σ_j (x_j − x'_j)²/ℓ_j²)
// and noise variance σ_n² trained on the Broom's Barn soil survey,
//
//	f(x) = k(x, X)ᵀ (K_XX + σ_n² I)⁻¹ y,   x ∈ [0,1]²  (Eq. (1)'s mean),
//
// read from dir (the files Log10PInputsFile, Log10POutputsFile and
// Log10PHyperFile, whitespace-separated decimal numbers). The hyper-parameters
// are the file's, the paper's (σ_s² = 7.669e-2, ℓ = (9.106e-2, 3.971e-2),
// σ_n² = 2.511e-2), and NoiseVar is the file's σ_n². f* is found at load by a
// 201×201 grid search (spacing 0.005, an eighth of the shorter length-scale)
// refined by projected gradient ascent from the best 24 grid peaks; loading
// the 433-point survey takes a fraction of a second.
//
// The data may not be copied into the repository: callers pass its directory.
func Log10P(dir string) (*Function, error) {
	m, err := loadLog10P(dir)
	if err != nil {
		return nil, fmt.Errorf("log10p: %w", err)
	}
	return m.function(), nil
}

// gpMean is the posterior mean of a GP with a 2-d SE-ARD kernel,
// m(x) = Σ_i β_i exp(−½ λ₁ (x₁ − X_i1)²) exp(−½ λ₂ (x₂ − X_i2)²) with
// β = σ_s² α and α = (K + σ_n² I)⁻¹ y. The kernel factorizes over
// coordinates and survey locations share few distinct coordinates (31 and 18
// on the Broom's Barn grid), so value computes each factor once per distinct
// coordinate value rather than once per location.
type gpMean struct {
	x        [][]float64 // training inputs
	beta     []float64   // σ_s² α
	lambda   []float64   // 1/ℓ_j²
	noiseVar float64
	uniq     [2][]float64 // distinct values of each coordinate
	idx      [2][]int     // idx[d][i]: position of X_id in uniq[d]

	optimum   float64
	maximizer []float64
}

func loadLog10P(dir string) (*gpMean, error) {
	if dir == "" {
		return nil, errors.New("no data directory given: pass the directory holding " +
			Log10PInputsFile + ", " + Log10POutputsFile + " and " + Log10PHyperFile +
			" (the paper's Broom's Barn data, e.g. --param data=/path/to/brooms-barn)")
	}
	X, err := readTable(filepath.Join(dir, Log10PInputsFile), 0)
	if err != nil {
		return nil, err
	}
	Y, err := readTable(filepath.Join(dir, Log10POutputsFile), 1)
	if err != nil {
		return nil, err
	}
	H, err := readTable(filepath.Join(dir, Log10PHyperFile), 1)
	if err != nil {
		return nil, err
	}
	if len(X) == 0 {
		return nil, fmt.Errorf("%s holds no locations", Log10PInputsFile)
	}
	if d := len(X[0]); d != 2 {
		return nil, fmt.Errorf("%s has %d columns, want 2 (locations in [0,1]²)", Log10PInputsFile, d)
	}
	if len(Y) != len(X) {
		return nil, fmt.Errorf("%s has %d rows but %s has %d; want one output per location",
			Log10POutputsFile, len(Y), Log10PInputsFile, len(X))
	}
	if len(H) != 4 {
		return nil, fmt.Errorf("%s has %d values, want 4 (σ_s², 1/ℓ₁², 1/ℓ₂², σ_n²)", Log10PHyperFile, len(H))
	}
	for i, row := range X {
		for j, v := range row {
			if v < 0 || v > 1 {
				return nil, fmt.Errorf("%s row %d column %d is %g, want a location in [0,1]", Log10PInputsFile, i+1, j+1, v)
			}
		}
	}
	for i, h := range H {
		if !(h[0] > 0) {
			return nil, fmt.Errorf("%s value %d is %g, want a positive number", Log10PHyperFile, i+1, h[0])
		}
	}
	y := make([]float64, len(Y))
	for i, r := range Y {
		y[i] = r[0]
	}
	m, err := newGPMean(X, y, H[0][0], []float64{H[1][0], H[2][0]}, H[3][0])
	if err != nil {
		return nil, err
	}
	m.optimum, m.maximizer = m.search()
	return m, nil
}

// newGPMean solves (K + σ_n² I) α = y by Cholesky, adding jitter (1e-10,
// 1e-9, … times the signal variance) only if the factorization fails.
func newGPMean(X [][]float64, y []float64, sigVar float64, lambda []float64, noiseVar float64) (*gpMean, error) {
	n := len(X)
	m := &gpMean{x: X, lambda: lambda, noiseVar: noiseVar}
	K := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			K.SetSym(i, j, sigVar*m.kernel(X[i], X[j]))
		}
	}
	var chol mat.Cholesky
	jitter := 0.0
	for {
		A := mat.NewSymDense(n, nil)
		A.CopySym(K)
		for i := 0; i < n; i++ {
			A.SetSym(i, i, A.At(i, i)+noiseVar+jitter)
		}
		if chol.Factorize(A) {
			break
		}
		if jitter == 0 {
			jitter = 1e-10 * sigVar
		} else {
			jitter *= 10
		}
		if jitter > 1e-2*sigVar {
			return nil, fmt.Errorf("kernel matrix of %d points is not positive definite even with jitter %g; check for duplicate locations and a positive noise variance", n, jitter)
		}
	}
	var alpha mat.VecDense
	if err := chol.SolveVecTo(&alpha, mat.NewVecDense(n, y)); err != nil {
		return nil, fmt.Errorf("solve for the GP weights: %w", err)
	}
	m.beta = make([]float64, n)
	for i := range m.beta {
		m.beta[i] = sigVar * alpha.AtVec(i)
	}
	m.index()
	return m, nil
}

// kernel returns exp(−½ Σ_j λ_j (a_j − b_j)²), the SE kernel over σ_s².
func (m *gpMean) kernel(a, b []float64) float64 {
	var q float64
	for j, l := range m.lambda {
		d := a[j] - b[j]
		q += l * d * d
	}
	return math.Exp(-0.5 * q)
}

// index fills uniq and idx.
func (m *gpMean) index() {
	for d := 0; d < 2; d++ {
		pos := map[float64]int{}
		m.idx[d] = make([]int, len(m.x))
		for i, xi := range m.x {
			p, ok := pos[xi[d]]
			if !ok {
				p = len(m.uniq[d])
				pos[xi[d]] = p
				m.uniq[d] = append(m.uniq[d], xi[d])
			}
			m.idx[d][i] = p
		}
	}
}

// value returns m(x) and, if dst != nil, writes
// ∇m(x) = Σ_i β_i k_i(x) (−λ ⊙ (x − X_i)).
func (m *gpMean) value(x, dst []float64) float64 {
	var e, de [2][]float64
	var buf [4][64]float64 // avoids allocation on survey-sized grids
	for d := 0; d < 2; d++ {
		u := m.uniq[d]
		if len(u) <= len(buf[0]) {
			e[d], de[d] = buf[2*d][:len(u)], buf[2*d+1][:len(u)]
		} else {
			e[d], de[d] = make([]float64, len(u)), make([]float64, len(u))
		}
		for p, v := range u {
			t := x[d] - v
			e[d][p] = math.Exp(-0.5 * m.lambda[d] * t * t)
			de[d][p] = -m.lambda[d] * t * e[d][p]
		}
	}
	i1, i2 := m.idx[0], m.idx[1]
	var f, g1, g2 float64
	for i, b := range m.beta {
		a, c := i1[i], i2[i]
		f += b * e[0][a] * e[1][c]
		g1 += b * de[0][a] * e[1][c]
		g2 += b * e[0][a] * de[1][c]
	}
	if dst != nil {
		dst[0], dst[1] = g1, g2
	}
	return f
}

func (m *gpMean) function() *Function {
	return &Function{
		Name:       "log10p",
		Dim:        2,
		Lower:      []float64{0, 0},
		Upper:      []float64{1, 1},
		Optimum:    m.optimum,
		Maximizers: [][]float64{append([]float64(nil), m.maximizer...)},
		NoiseVar:   m.noiseVar,
		f:          func(x []float64) float64 { return m.value(x, nil) },
		grad:       m.value,
	}
}

// search evaluates m on a 201×201 grid through the separable form
// M = E₁ diag(β) E₂ᵀ, E_d[a][i] = exp(−½ λ_d (g_a − X_id)²), and refines the
// best grid peaks.
func (m *gpMean) search() (float64, []float64) {
	const n = 201
	g := linspace(0, 1, n)
	N := len(m.x)
	E1 := mat.NewDense(n, N, nil)
	E2 := mat.NewDense(n, N, nil)
	for a, v := range g {
		for i, xi := range m.x {
			d1, d2 := v-xi[0], v-xi[1]
			E1.Set(a, i, m.beta[i]*math.Exp(-0.5*m.lambda[0]*d1*d1))
			E2.Set(a, i, math.Exp(-0.5*m.lambda[1]*d2*d2))
		}
	}
	var M mat.Dense
	M.Mul(E1, E2.T())
	grid := make([][]float64, n)
	for a := range grid {
		grid[a] = M.RawRowView(a)
	}
	lo, hi := []float64{0, 0}, []float64{1, 1}
	best, bestX := math.Inf(-1), []float64(nil)
	for _, p := range gridPeaks(grid, g, g, 24) {
		x, v := refine(m.value, p.x[:], lo, hi)
		if v > best {
			best, bestX = v, x
		}
	}
	return best, bestX
}

// readTable reads a text file of whitespace-separated decimal numbers, one
// row per non-blank line, all rows of equal length (cols, or any if 0).
func readTable(path string, cols int) ([][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read data: %w", err)
	}
	defer f.Close()
	var rows [][]float64
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if cols == 0 {
			cols = len(fields)
		}
		if len(fields) != cols {
			return nil, fmt.Errorf("%s line %d has %d numbers, want %d", path, line, len(fields), cols)
		}
		row := make([]float64, cols)
		for j, s := range fields {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s line %d: %q is not a finite number", path, line, s)
			}
			row[j] = v
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return rows, nil
}
