package host

// The proposal step and the recommendation work on a view: a snapshot of
// the study taken under its lock, computed on with no lock held, and
// committed back under the lock. Fitting a GP and running an acquisition
// take from milliseconds to minutes; Tell, Trials and the heartbeat must
// not wait for them.

// viewLocked returns a snapshot of the study for one proposal or
// recommendation: the immutable parts shared (space, options, seed,
// proposer, logger, design), the trials copied, and no database, so that
// nothing computed on it writes anywhere. s.mu must be held.
func (s *Study) viewLocked() *Study {
	return &Study{
		name: s.name, info: s.info, space: s.space, opts: s.opts, seed: s.seed,
		proposer: s.proposer, id: s.id, log: s.log, mf: s.mf,
		trials:    append([]Trial(nil), s.trials...),
		design:    s.design,
		pins:      s.pins,
		lastIter:  s.lastIter,
		lastModel: s.lastModel,
		version:   s.version,
		cache:     s.cache, cacheKey: s.cacheKey,
		refine: s.refine,
		hooks:  s.hooks,
	}
}

// adoptFitLocked keeps the fit a view made, for the next proposal or
// recommendation on the same data (the cache key holds the data version
// it was fitted on, so a fit of data that changed meanwhile is never
// reused). s.mu must be held.
func (s *Study) adoptFitLocked(v *Study) {
	if v.cache != nil && v.cacheKey[0] == s.version {
		s.cache, s.cacheKey = v.cache, v.cacheKey
	}
}
