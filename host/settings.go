package host

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// settingsVersion is the version of the stored settings (settingsRecord)
// this code writes and the newest it reads:
//
//   - 1 (no "version" field): every study stored before the field existed.
//     Decoded by the legacy rules of decodeSettings.
//   - 2: the same fields, with "version". Written normalized, so read as
//     they are.
//
// Add a version, never change one: a stored study must keep decoding to
// the options it ran with, or its resumed trials would differ.
const settingsVersion = 2

// settingsRecord is the stored form of a study's settings (the studies
// table's settings column): the options that shape its trials, as they
// were stored, plus its objective's Info. It is separate from Options so
// that the public options can change without changing what stored studies
// mean: a new stored option is a new field here (and, if its zero value is
// not what old studies ran with, a new version).
type settingsRecord struct {
	Version      int                `json:"version,omitempty"`
	Acquisition  string             `json:"acquisition"`
	AcqOptions   acq.Options        `json:"acq_options"`
	Batch        int                `json:"batch"`
	AutoBatch    bool               `json:"auto_batch,omitempty"`
	BatchGain    acq.GainRule       `json:"batch_gain,omitzero"`
	Iters        int                `json:"iters"`
	Init         int                `json:"init"`
	NoInit       bool               `json:"no_init,omitempty"`
	Parallel     int                `json:"parallel"`
	NoiseVar     float64            `json:"noise_var"`
	ZeroNoise    bool               `json:"zero_noise,omitempty"`
	FixNoise     bool               `json:"fix_noise,omitempty"`
	Params       map[string]string  `json:"params,omitempty"`
	Kernel       string             `json:"kernel"`
	GPPrior      string             `json:"gp_prior,omitempty"`
	Model        string             `json:"model,omitempty"`
	LocalPoints  int                `json:"local_points,omitempty"`
	Recommend    string             `json:"recommend"`
	Pruning      Pruning            `json:"pruning,omitzero"`
	Fidelity     MultiFidelity      `json:"multi_fidelity,omitzero"`
	EvalTimeout  time.Duration      `json:"eval_timeout"`
	Retries      int                `json:"retries"`
	RetryBackoff time.Duration      `json:"retry_backoff"`
	Meta         map[string]string  `json:"meta,omitempty"`
	Fixed        map[string]float64 `json:"fixed,omitempty"`
	WarmStart    []string           `json:"warm_start,omitempty"`
	WarmMode     string             `json:"warm_start_mode,omitempty"`
	WarmPoints   []nullable         `json:"warm_points,omitempty"` // a conditional space's inactive coordinates null
	Info         sdk.Info           `json:"info"`
}

// recordOf is the stored form of a study's options and Info.
func recordOf(o Options, info sdk.Info) settingsRecord {
	return settingsRecord{Version: settingsVersion,
		Acquisition: o.Acquisition, AcqOptions: o.AcqOptions,
		Batch: o.Batch, AutoBatch: o.AutoBatch, BatchGain: o.BatchGain,
		Iters: o.Iters, Init: o.Init, NoInit: o.NoInit, Parallel: o.Parallel,
		NoiseVar: o.NoiseVar, ZeroNoise: o.ZeroNoise, FixNoise: o.FixNoise, Params: o.Params,
		Kernel: o.Kernel, GPPrior: o.GPPrior, Model: o.Model, LocalPoints: o.LocalPoints,
		Recommend: o.Recommend, Pruning: o.Pruning, Fidelity: o.MultiFidelity, EvalTimeout: o.EvalTimeout, Retries: o.Retries,
		RetryBackoff: o.RetryBackoff, Meta: o.Meta, Fixed: o.Fixed,
		WarmStart: o.WarmStart, WarmMode: o.WarmStartMode, WarmPoints: toNullables(o.warmPoints), Info: info}
}

// options returns the stored options (not normalized).
func (r settingsRecord) options() Options {
	return Options{Acquisition: r.Acquisition, AcqOptions: r.AcqOptions,
		Batch: r.Batch, AutoBatch: r.AutoBatch, BatchGain: r.BatchGain,
		Iters: r.Iters, Init: r.Init, NoInit: r.NoInit, Parallel: r.Parallel,
		NoiseVar: r.NoiseVar, ZeroNoise: r.ZeroNoise, FixNoise: r.FixNoise, Params: r.Params,
		Kernel: r.Kernel, GPPrior: r.GPPrior, Model: r.Model, LocalPoints: r.LocalPoints,
		Recommend: r.Recommend, Pruning: r.Pruning, MultiFidelity: r.Fidelity, EvalTimeout: r.EvalTimeout, Retries: r.Retries,
		RetryBackoff: r.RetryBackoff, Meta: r.Meta, Fixed: r.Fixed,
		WarmStart: r.WarmStart, WarmStartMode: r.WarmMode, warmPoints: floatsOf(r.WarmPoints)}
}

// storedSettings is a study's decoded settings: its normalized options
// and its objective's Info (its optimum and direction).
type storedSettings struct {
	Options
	Info sdk.Info
}

// encodeSettings returns the stored form of a study's settings.
func encodeSettings(o Options, info sdk.Info) ([]byte, error) {
	return json.Marshal(recordOf(o, info))
}

// StoredSettings returns a stored study's options (defaults filled in; no
// per-process fields) and its objective's Info, without opening the study.
func StoredSettings(ctx context.Context, storage *Storage, name string) (Options, sdk.Info, error) {
	if err := checkStorage(storage); err != nil {
		return Options{}, sdk.Info{}, err
	}
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
// it meant then. Version 1 (no version field) carries three legacy rules:
// noise_var 0 without zero_noise (older versions) is a noise-free study, a
// missing gp_prior (stored before the option existed) is PriorWeak, and a
// missing kernel is KernelSE (the default before DefaultKernel became
// Matérn-5/2).
func decodeSettings(b []byte) (*storedSettings, error) {
	var r settingsRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("bad stored settings: %w", err)
	}
	switch {
	case r.Version > settingsVersion:
		return nil, fmt.Errorf("stored settings of version %d, this tesbo reads up to %d: upgrade tesbo", r.Version, settingsVersion)
	case r.Version < 0:
		return nil, fmt.Errorf("bad stored settings: version %d", r.Version)
	case r.Version <= 1: // absent: version 1
		if r.NoiseVar == 0 {
			r.ZeroNoise = true
		}
		if r.GPPrior == "" {
			r.GPPrior = PriorWeak
		}
		if r.Kernel == "" {
			r.Kernel = KernelSE
		}
	}
	return &storedSettings{Options: r.options().Normalized(), Info: r.Info}, nil
}
