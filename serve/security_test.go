package serve

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// Without a token only loopback Host headers are answered (DNS
// rebinding: a page of another site that resolves to 127.0.0.1).
func TestLoopbackOnlyWithoutToken(t *testing.T) {
	db, _ := newDB(t)
	srv := newServer(t, db, Settings{})
	for host, want := range map[string]int{
		"127.0.0.1:8080": 200, "localhost:8080": 200, "LOCALHOST": 200, "[::1]:8080": 200, "127.0.0.2": 200,
		"evil.example:8080": 403, "10.0.0.1:8080": 403, "": 403, "127.0.0.1.evil.example": 403,
	} {
		req := httptest.NewRequest(http.MethodGet, "/api/studies", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
		if want == 403 && !strings.Contains(rec.Body.String(), "not a loopback address") {
			t.Errorf("Host %q: %s", host, rec.Body.String())
		}
	}
}

// With a token, every request must carry it: as a bearer header, as a
// ?token= link (which sets a cookie and, for a page, redirects to the
// address without it) or as that cookie; from any host.
func TestToken(t *testing.T) {
	db, _ := newDB(t)
	runStudy(t, db, "a", "random", 0)
	const tok = "0123456789abcdef-secret"
	srv := newServer(t, db, Settings{Token: tok})
	for _, path := range []string{"/", "/study/a", "/api/studies", "/api/trials?name=a", "/api/model?name=a", "/api/events?name=a", "/assets/study.js", "/nowhere"} {
		for _, hdr := range []string{"", "Authorization: Bearer wrong-token-0123456", "Authorization: Bearer " + tok + "x",
			"Authorization: " + tok, "Cookie: tesbo_token=nope"} {
			rec := get(t, srv, path, hdr)
			if rec.Code != 401 || rec.Header().Get("WWW-Authenticate") == "" || !strings.Contains(rec.Body.String(), "missing or wrong token") {
				t.Fatalf("%s with %q: %d %s", path, hdr, rec.Code, rec.Body.String())
			}
		}
	}
	if rec := get(t, srv, "/api/studies?token=nope"); rec.Code != 401 {
		t.Fatalf("wrong ?token=: %d", rec.Code)
	}
	if rec := get(t, srv, "/api/studies", "Authorization: Bearer "+tok); rec.Code != 200 {
		t.Fatalf("bearer: %d %s", rec.Code, rec.Body.String())
	}
	// Any host may ask once it has the token.
	req := httptest.NewRequest(http.MethodGet, "/api/studies", nil)
	req.Host = "tesbo.example:8080"
	req.Header.Set("Authorization", "Bearer "+tok)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("remote host with the token: %d", rec.Code)
	}
	// The printed link: a redirect without the token, and a cookie.
	rec = get(t, srv, "/study/a?token="+tok)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/study/a" {
		t.Fatalf("link: %d to %q", rec.Code, rec.Header().Get("Location"))
	}
	// A link whose path starts with // stays on this server (it redirected
	// to another site, //evil.example/).
	for _, p := range []string{"//evil.example/?token=", "/\\evil.example/x?token="} {
		rec := get(t, srv, p+tok)
		if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\") {
			t.Fatalf("link %q: %d to %q", p, rec.Code, loc)
		}
	}
	cookie := rec.Result().Cookies()
	if len(cookie) != 1 || cookie[0].Name != tokenCookie || !cookie[0].HttpOnly || cookie[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie %+v", cookie)
	}
	if rec := get(t, srv, "/study/a", "Cookie: "+cookie[0].String()); rec.Code != 200 {
		t.Fatalf("with the cookie: %d", rec.Code)
	}
	if rec := get(t, srv, "/api/trials?name=a&token="+tok); rec.Code != 200 {
		t.Fatalf("API with ?token=: %d", rec.Code)
	}
}

// tokenOK compares whole tokens only.
func TestTokenCompare(t *testing.T) {
	s := New(nil, Settings{Token: "abcdefghijklmnop"})
	for tok, want := range map[string]bool{"abcdefghijklmnop": true, "abcdefghijklmno": false, "abcdefghijklmnopq": false, "": false, "Abcdefghijklmnop": false} {
		if s.tokenOK(tok) != want {
			t.Errorf("tokenOK(%q) = %v", tok, !want)
		}
	}
}

// A database file that disappears (removed or moved) gives a page and API
// answers that say so, not a crash and not the stale content SQLite would
// still read from the deleted file; a closed database likewise.
func TestDisappearingDatabase(t *testing.T) {
	db, path := newDB(t)
	runStudy(t, db, "a", "random", 0)
	srv := newServer(t, db, Settings{})
	if rec := get(t, srv, "/study/a"); rec.Code != 200 {
		t.Fatalf("before: %d", rec.Code)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
	for _, p := range []string{"/", "/study/a"} {
		rec := get(t, srv, p)
		if rec.Code != 503 || !strings.Contains(rec.Body.String(), "the study database is gone") ||
			!strings.Contains(rec.Body.String(), "was removed or moved") {
			t.Fatalf("%s: %d %s", p, rec.Code, rec.Body.String())
		}
	}
	for _, p := range []string{"/api/studies", "/api/study?name=a", "/api/trials?name=a", "/api/model?name=a", "/api/events?name=a"} {
		var e struct{ Error string }
		decodeJSON(t, get(t, srv, p), 503, &e)
		if !strings.Contains(e.Error, path) {
			t.Fatalf("%s: %q", p, e.Error)
		}
	}

	db2, _ := newDB(t)
	runStudy(t, db2, "b", "random", 0)
	srv2 := newServer(t, db2, Settings{})
	db2.Close()
	for _, p := range []string{"/", "/study/b"} {
		rec := get(t, srv2, p)
		if rec.Code != 503 || !strings.Contains(rec.Body.String(), "database is closed") {
			t.Fatalf("closed database %s: %d %s", p, rec.Code, rec.Body.String())
		}
	}
}

// The Authorization scheme is case-insensitive (RFC 7235 §2.1): bearer,
// BEARER and Bearer all carry the token; a wrong token in any case does
// not.
func TestBearerSchemeCase(t *testing.T) {
	db, _ := newDB(t)
	const tok = "0123456789abcdef-secret"
	srv := newServer(t, db, Settings{Token: tok})
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		if rec := get(t, srv, "/api/studies", "Authorization: "+scheme+" "+tok); rec.Code != 200 {
			t.Errorf("%s: %d %s", scheme, rec.Code, rec.Body.String())
		}
		if rec := get(t, srv, "/api/studies", "Authorization: "+scheme+" "+tok+"x"); rec.Code != 401 {
			t.Errorf("%s with a wrong token: %d", scheme, rec.Code)
		}
	}
	for _, h := range []string{"Basic " + tok, "Bearer" + tok, tok} {
		if rec := get(t, srv, "/api/studies", "Authorization: "+h); rec.Code != 401 {
			t.Errorf("%q: %d", h, rec.Code)
		}
	}
}

// /assets/ lists no directory (a 404, not the file names); its files are
// served.
func TestNoAssetListing(t *testing.T) {
	db, _ := newDB(t)
	srv := newServer(t, db, Settings{})
	for _, p := range []string{"/assets/", "/assets//", "/assets/./", "/assets/nope.js"} {
		rec := get(t, srv, p)
		if loc := rec.Header().Get("Location"); rec.Code == http.StatusTemporaryRedirect && loc != "" {
			rec = get(t, srv, loc) // the mux cleans the path first
		}
		if rec.Code != 404 || strings.Contains(rec.Body.String(), "study.js") {
			t.Errorf("%s: %d %s", p, rec.Code, rec.Body.String())
		}
	}
	if rec := get(t, srv, "/assets"); rec.Code == 200 {
		t.Errorf("/assets: %d %s", rec.Code, rec.Body.String())
	}
	if rec := get(t, srv, "/assets/study.js"); rec.Code != 200 || !strings.Contains(rec.Body.String(), "use strict") {
		t.Errorf("/assets/study.js: %d", rec.Code)
	}
}
