// Package serve is a read-only web view of the studies in a study database:
// an http.Handler (Server) that lists the studies and shows each one live
// while other processes write it.
//
// Pages and endpoints (every one GET; names of studies go in the query,
// since they may hold slashes):
//
//	/                          the studies: objective, acquisition, state,
//	                           evaluations done/budget, best observed,
//	                           regret when f* is known, last activity
//	/study/NAME                one study: best observed and recommendation
//	                           value vs evaluations, trial table, parameter
//	                           scatter, time per iteration, the model's view
//	/api/studies               the list as JSON
//	/api/study?name=N          one study's summary, parameters, iterations
//	/api/trials?name=N         its trials (format=json|csv, download=1)
//	/api/model?name=N          its latest model's view (see below)
//	/api/model2d?name=N&x=I&y=J  its posterior over parameters I and J
//	                           (indices), the others at x̄, on a grid of
//	                           at most 61×61 (res=, default 31)
//	/api/events?name=N         Server-Sent Events: new and changed trials,
//	                           iterations and the summary, as committed
//	/assets/…                  the embedded scripts, styles and uPlot
//
// The list reads /api/studies every 2 s; it sorts and filters in the
// browser. Any page with ?static=1 loads once and stays as loaded (no event
// stream, no polling): the address to screenshot with a headless browser.
//
// Live updates poll the database cheaply (store.Storage.Activity: one aggregate
// query) every Settings.Poll per watched study, however many browsers
// watch it, and read the trials only when something changed.
//
// The model's view at the latest fitted iteration t is recomputed from the
// stored trials and the hyper-parameters stored with t
// (host.LoadPosterior, no refit): along each parameter through x̄ — the
// evaluated point with the largest posterior mean — the posterior mean
// ± 2σ of f (at each choice of a categorical parameter), each parameter's
// importance (its main effect's share of the variance of the posterior
// mean, importance.go), and for TES the trusted maximizers X* of iteration t with
// p(x* | y_D) (tes.MaximizerProbabilities on the posterior of f at X*).
//
// Security: the server only reads. With Settings.Token empty it answers
// only requests whose Host is a loopback name or address (it is meant to
// listen on loopback; this also defeats DNS rebinding); with a token every
// request must carry it (Authorization: Bearer, ?token=, or the cookie a
// ?token= link sets), compared in constant time.
package serve
