package serve

import (
	"embed"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tesbo/tesbo/store"
)

// assets are the files under /assets/: the page scripts and styles and
// uPlot (see assets/README.md).
//
//go:embed assets
var assetFS embed.FS

//go:embed templates
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"num":      fmtNum,
	"ago":      ago,
	"studyURL": func(name string) string { return "/study/" + url.PathEscape(name) },
}).ParseFS(templateFS, "templates/*.html"))

// assetHandler serves the embedded assets; they change only with the
// binary, so browsers may keep them for a day. It lists no directory:
// a path naming one (/assets/, or /assets/x/ had there been any) is a 404.
func assetHandler() http.Handler {
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	files := http.FileServerFS(sub)
	return http.StripPrefix("/assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == "" || strings.HasSuffix(p, "/") || isDir(sub, p) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=86400")
		files.ServeHTTP(w, r)
	}))
}

// isDir reports whether name is a directory of fsys.
func isDir(fsys fs.FS, name string) bool {
	st, err := fs.Stat(fsys, strings.TrimPrefix(name, "/"))
	return err == nil && st.IsDir()
}

// fmtNum formats an optional value with 6 significant digits ("–" for
// none).
func fmtNum(v *float64) string {
	if v == nil || math.IsNaN(*v) {
		return "–"
	}
	return strconv.FormatFloat(*v, 'g', 6, 64)
}

// ago says how long ago t was, coarsely.
func ago(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < 0:
		return "just now"
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + " s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + " min ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + " h ago"
	}
	return t.Local().Format("2006-01-02 15:04")
}

// dbLabel is the database as the pages name it: its path, or a server
// URL without its password.
func (s *Server) dbLabel() string { return store.Redact(s.db.Path()) }

func (s *Server) listPage(w http.ResponseWriter, r *http.Request) {
	sums, err := s.loadSummaries(r.Context())
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.render(w, "list.html", map[string]any{"DB": s.dbLabel(), "Studies": sums})
}

func (s *Server) studyPage(w http.ResponseWriter, r *http.Request) {
	name, err := studyName(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	sm, err := s.loadSummary(r.Context(), name)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.render(w, "study.html", map[string]any{"DB": s.dbLabel(), "S": sm})
}

func (s *Server) render(w http.ResponseWriter, page string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := pages.ExecuteTemplate(w, page, data); err != nil {
		s.log.Warn().Err(err).Str("page", page).Msg("render")
	}
}
