package serve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/internal/storebridge"
	"github.com/tesbo/tesbo/store"
)

// Settings configure a Server. The zero value serves without a token (to
// loopback clients only), polls every 500 ms and logs nothing.
type Settings struct {
	// Token, when set, must accompany every request (see the package doc).
	Token string
	// Poll is how often a watched study's activity is read for live
	// updates. Zero means 500 ms.
	Poll time.Duration
	// ModelMaxEvaluations bounds the evaluations a model view conditions
	// on (rebuilding it factorizes an n×n matrix). Zero means 2000.
	ModelMaxEvaluations int
	// Logger receives request failures and poll errors (zero value:
	// discard).
	Logger zerolog.Logger
}

// Defaults of Settings.
const (
	DefaultPoll                = 500 * time.Millisecond
	DefaultModelMaxEvaluations = 2000
	// maxNameLen bounds the study names the server looks up.
	maxNameLen = 1024
)

func (s Settings) withDefaults() Settings {
	if s.Poll <= 0 {
		s.Poll = DefaultPoll
	}
	if s.ModelMaxEvaluations <= 0 {
		s.ModelMaxEvaluations = DefaultModelMaxEvaluations
	}
	return s
}

// Server is the web view of one study database. It never writes to it.
type Server struct {
	st    *host.Storage
	db    store.Storage // st's database, read directly
	set   Settings
	log   zerolog.Logger
	mux   *http.ServeMux
	token [sha256.Size]byte
	hub   *hub

	modelMu   sync.Mutex
	models    map[string]*modelEntry // at most maxCachedModels
	modelTick uint64                 // counts model requests, for modelEntry.used
}

// New returns the Server of the study database st (open it read-only:
// host.StorageOptions.ReadOnly). Close it to stop its pollers.
func New(st *host.Storage, s Settings) *Server {
	s = s.withDefaults()
	var db store.Storage
	if st != nil {
		db = storebridge.Unwrap(st)
	}
	srv := &Server{st: st, db: db, set: s, log: s.Logger, models: map[string]*modelEntry{}}
	srv.token = sha256.Sum256([]byte(s.Token))
	srv.hub = newHub(srv)
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", srv.listPage)
	m.HandleFunc("GET /study/{name...}", srv.studyPage)
	m.Handle("GET /assets/", assetHandler())
	m.HandleFunc("GET /api/studies", srv.apiStudies)
	m.HandleFunc("GET /api/study", srv.apiStudy)
	m.HandleFunc("GET /api/trials", srv.apiTrials)
	m.HandleFunc("GET /api/model", srv.apiModel)
	m.HandleFunc("GET /api/model2d", srv.apiModel2D)
	m.HandleFunc("GET /api/events", srv.apiEvents)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			srv.fail(w, r, http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed: this server only reads", r.Method))
			return
		}
		srv.fail(w, r, http.StatusNotFound, fmt.Errorf("no page %s", r.URL.Path))
	})
	srv.mux = m
	return srv
}

// Close stops the pollers of live updates and ends their streams.
func (s *Server) Close() { s.hub.close() }

// ServeHTTP implements http.Handler: security headers, the token or
// loopback check, then the pages.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
	if !s.authorized(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// tokenCookie is the cookie a ?token= link sets, so that the page's own
// requests (scripts, API, event stream) carry the token.
const tokenCookie = "tesbo_token"

// authorized checks the request's token (or, without one, its Host) and
// answers it when it fails. A valid ?token= on a page sets the cookie and
// redirects to the same page without the token in its address.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.set.Token == "" {
		if !loopbackHost(r.Host) {
			s.fail(w, r, http.StatusForbidden, fmt.Errorf("host %q is not a loopback address: without --token this server answers only http://127.0.0.1, [::1] or localhost (start it with --token to serve other hosts)", r.Host))
			return false
		}
		return true
	}
	if tok, ok := bearer(r.Header.Get("Authorization")); ok && s.tokenOK(tok) {
		return true
	}
	if c, err := r.Cookie(tokenCookie); err == nil && s.tokenOK(c.Value) {
		return true
	}
	q := r.URL.Query()
	if q.Has("token") && s.tokenOK(q.Get("token")) {
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: q.Get("token"), Path: "/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode})
		if !isAPI(r) {
			q.Del("token")
			// A path such as //evil.example/ would leave the site: the
			// redirect stays on this server's own paths.
			u := url.URL{Path: "/" + strings.TrimLeft(path.Clean(r.URL.Path), "/"), RawQuery: q.Encode()}
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return false
		}
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="tesbo"`)
	s.fail(w, r, http.StatusUnauthorized, errors.New("missing or wrong token: open the link 'tesbo-host serve' printed (it ends in ?token=...) or send the header Authorization: Bearer TOKEN"))
	return false
}

// bearer returns the token of an Authorization header of the Bearer
// scheme, whose name is case-insensitive (RFC 7235 §2.1: "bearer" and
// "BEARER" are the same scheme).
func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// tokenOK compares tok with the server's token in constant time (hashes
// of equal length, so not even the length leaks).
func (s *Server) tokenOK(tok string) bool {
	h := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(h[:], s.token[:]) == 1
}

// loopbackHost reports whether a Host header names this machine's
// loopback interface.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func isAPI(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") }

// errGone: the database file was removed or moved.
var errGone = errors.New("the study database is gone")

// checkDB fails when the database file no longer exists: SQLite would go on
// reading the deleted file through its open descriptor, showing a study that
// no longer exists anywhere.
func (s *Server) checkDB() error {
	p := s.db.Path()
	if strings.Contains(p, "://") {
		return nil // a server database: its errors speak for themselves
	}
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("%w: %s cannot be found (%v); it was removed or moved: restart 'tesbo-host serve' with its new path", errGone, p, err)
	}
	return nil
}

// status maps an error to the HTTP status of its page.
func status(err error) int {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, errBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, context.Canceled):
		return 499 // the client went away
	default:
		return http.StatusServiceUnavailable
	}
}

var errBadRequest = errors.New("bad request")

// fail answers a request with an error: JSON {"error": ...} for the API,
// an HTML page otherwise.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, code int, err error) {
	if code >= 500 {
		s.log.Warn().Err(err).Str("path", r.URL.Path).Int("status", code).Msg("request failed")
	}
	msg := err.Error()
	if isAPI(r) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(map[string]string{"error": msg})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	pages.ExecuteTemplate(w, "error.html", map[string]any{"Status": code, "StatusText": http.StatusText(code), "Message": msg})
}

// failErr answers with the status err maps to.
func (s *Server) failErr(w http.ResponseWriter, r *http.Request, err error) {
	s.fail(w, r, status(err), err)
}

// studyName returns the study named by the request (query name=, or the
// path of /study/NAME), checked for length.
func studyName(r *http.Request) (string, error) {
	name := r.PathValue("name")
	if name == "" {
		name = r.URL.Query().Get("name")
	}
	switch {
	case name == "":
		return "", fmt.Errorf("%w: no study named: add ?name=STUDY", errBadRequest)
	case len(name) > maxNameLen:
		return "", fmt.Errorf("study name of %d bytes %w (names are at most %d bytes)", len(name), store.ErrNotFound, maxNameLen)
	}
	return name, nil
}

// writeJSON sends v as JSON. It is encoded before anything is sent, so a
// value JSON cannot carry (a NaN) is a 500 with the reason rather than an
// empty 200.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, fmt.Errorf("encode response: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if _, err := w.Write(append(b, '\n')); err != nil {
		s.log.Debug().Err(err).Msg("write response")
	}
}
