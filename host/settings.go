package host

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// storedSettings is what a study keeps besides its space: the options plus
// the objective's full Info (its optimum and direction).
type storedSettings struct {
	Options
	Info sdk.Info `json:"info"`
}

// StoredSettings returns a stored study's options (defaults filled in; no
// per-process fields) and its objective's Info, without opening the study.
func StoredSettings(ctx context.Context, storage *Storage, name string) (Options, sdk.Info, error) {
	return storedSettingsOf(ctx, storage.store(), name)
}

// storedSettingsOf is StoredSettings on the store.
func storedSettingsOf(ctx context.Context, db store.Storage, name string) (Options, sdk.Info, error) {
	row, st, err := loadSettings(ctx, db, name)
	if err != nil {
		return Options{}, sdk.Info{}, err
	}
	o := st.Options.Stored()
	o.Name, o.Seed = name, row.Seed
	return o, st.Info, nil
}

func loadSettings(ctx context.Context, db store.Storage, name string) (*store.Study, *storedSettings, error) {
	row, err := db.Study(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	st, err := decodeSettings(row.Settings)
	if err != nil {
		return nil, nil, fmt.Errorf("study %q: %w", name, err)
	}
	return row, st, nil
}

// decodeSettings decodes a study's stored settings, written by this or an
// older version, into normalized options with the meaning they were stored
// with. Stored options were always normalized, so a stored zero means what
// it meant then: noise_var 0 without zero_noise (older versions) is a
// noise-free study, a missing gp_prior (stored before the option
// existed) is PriorWeak, and a missing kernel is KernelSE (the default
// before DefaultKernel became Matérn-5/2).
func decodeSettings(b []byte) (*storedSettings, error) {
	var st storedSettings
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("bad stored settings: %w", err)
	}
	if st.NoiseVar == 0 {
		st.ZeroNoise = true
	}
	if st.GPPrior == "" {
		st.GPPrior = PriorWeak
	}
	if st.Kernel == "" {
		st.Kernel = KernelSE
	}
	st.Options = st.Options.Normalized()
	return &st, nil
}
