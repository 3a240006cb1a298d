package serve

import (
	"context"
	"encoding/csv"
	"errors"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
)

// TestCSVNoFormulas: the CSV download quotes the text cells a spreadsheet
// would run as formulas (parameter names, categorical choices, errors
// starting with = + - @),
// and leaves numbers, negative ones included, as numbers.
func TestCSVNoFormulas(t *testing.T) {
	db, _ := newDB(t)
	ctx := context.Background()
	info := sdk.Info{Name: "f", Params: []sdk.Param{
		{Name: `=HYPERLINK("http://example.com","x")`, Kind: sdk.Float, Low: -2, High: -1},
		{Name: "@y", Kind: sdk.Float, Low: 0, High: 1},
		{Name: "c", Kind: sdk.Categorical, Choices: []string{"-2+3"}},
	}}
	s, err := host.NewStudy(ctx, info, host.Options{DB: hostStorage(db), Name: "f", Acquisition: "random", Init: 2, Iters: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	trs, err := s.Ask(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.Tell(ctx, trs[0].ID, 0, errors.New(`=cmd|' /C calc'!A0`))
	s.Tell(ctx, trs[1].ID, -3.5, nil)
	rec := get(t, newServer(t, db, Settings{}), "/api/trials?name=f&format=csv")
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := rows[0]
	if head[11] != `'=HYPERLINK("http://example.com","x")` || head[12] != "'@y" {
		t.Errorf("header %q", head)
	}
	if rows[1][5] != `'=cmd|' /C calc'!A0` {
		t.Errorf("error cell %q", rows[1][5])
	}
	if rows[2][4] != "-3.5" || rows[2][11][0] != '-' {
		t.Errorf("numbers quoted: value %q, x %q", rows[2][4], rows[2][11])
	}
	if rows[1][13] != "'-2+3" {
		t.Errorf("categorical choice cell %q", rows[1][13])
	}
}
