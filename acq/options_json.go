package acq

import (
	"encoding/json"
	"fmt"
)

// Options and OptimizeSettings are stored with a study (host.Options) as
// JSON. Versions before the json tags stored them under their Go field
// names; the keys the tags do not match case-insensitively are renamed on
// decoding, so stored settings of either form decode to the same values.
var (
	legacyOptionsKeys = map[string]string{
		"UCBBeta": "ucb_beta", "UCBDelta": "ucb_delta", "MCSamples": "mc_samples",
		"MaxValueSamples": "max_value_samples", "MESGumbel": "mes_gumbel", "PathFeatures": "path_features",
	}
	legacyOptimizeKeys = map[string]string{
		"RawSamples": "raw_samples", "MaxIter": "max_iter", "GradTol": "grad_tol", "FuncTol": "func_tol",
		"FDStep": "fd_step", "AdamIters": "adam_iters", "AdamStep": "adam_step",
	}
)

// UnmarshalJSON decodes o from its JSON form, also the one older versions
// stored (Go field names as keys).
func (o *Options) UnmarshalJSON(b []byte) error {
	type plain Options
	b, err := renameKeys(b, legacyOptionsKeys)
	if err != nil {
		return fmt.Errorf("acquisition options: %w", err)
	}
	return json.Unmarshal(b, (*plain)(o))
}

// UnmarshalJSON decodes s from its JSON form, also the one older versions
// stored (Go field names as keys).
func (s *OptimizeSettings) UnmarshalJSON(b []byte) error {
	type plain OptimizeSettings
	b, err := renameKeys(b, legacyOptimizeKeys)
	if err != nil {
		return fmt.Errorf("optimize settings: %w", err)
	}
	return json.Unmarshal(b, (*plain)(s))
}

// renameKeys renames the keys of the JSON object b found in legacy to
// their new names, unless the new name is present too. Anything other than
// an object is returned as it is, for json.Unmarshal to judge.
func renameKeys(b []byte, legacy map[string]string) ([]byte, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m == nil {
		return b, nil
	}
	renamed := false
	for old, name := range legacy {
		v, ok := m[old]
		if !ok {
			continue
		}
		delete(m, old)
		if _, dup := m[name]; !dup {
			m[name] = v
		}
		renamed = true
	}
	if !renamed {
		return b, nil
	}
	return json.Marshal(m)
}
