package loader

import (
	"path"
	"slices"
	"strings"
)

// DefaultEnvDeny lists the environment variables the host withholds from
// plugins unless Options.EnvDeny says otherwise: patterns in path.Match
// syntax, matched against the upper-cased variable name. They cover the
// usual ways secrets reach a process: any name containing PASS, KEY,
// SECRET, TOKEN, CREDENTIAL or AUTH (DB_PASS, STRIPE_KEY, SSH_AUTH_SOCK),
// PAT as a word of the name (GITHUB_PAT; not PATH), PostgreSQL's PG*
// variables (PGPASSWORD, PGPASSFILE, PGSERVICE), cloud accounts (AWS_*,
// AZURE_*), connection strings, PWD as a word but the working directory's
// own PWD and OLDPWD (MYSQL_PWD), JWT, COOKIE and WEBHOOK. Everything else
// (PATH, HOME, GOCACHE, CUDA_*, ...) is passed through, unless its value
// is a URL with a password (REDIS_URL=redis://:pw@host, HTTPS_PROXY):
// DenyURLPasswords withholds those whatever their name.
var DefaultEnvDeny = []string{
	"*PASS*", "*KEY*", "*SECRET*", "*TOKEN*", "*CREDENTIAL*", "*AUTH*",
	"PAT", "PAT_*", "*_PAT", "*_PAT_*",
	"PG*", "AWS_*", "AZURE_*", "GCP_SERVICE_ACCOUNT*",
	"GPG_AGENT_INFO", "*DATABASE_URL", "*_DSN", "NETRC",
	"*_PWD", "*_PWD_*", "PWD_*", "*JWT*", "*COOKIE*", "*WEBHOOK*",
	DenyURLPasswords,
}

// DenyURLPasswords, in a deny list, withholds the variables whose value is
// a URL with a password (scheme://user:password@host), whatever their
// name. It matches no name.
const DenyURLPasswords = "=url-with-password"

// pluginEnv returns environ minus the variables matching deny (and, with
// DenyURLPasswords among it, those whose value is a URL with a password),
// except those named in allow (exact names).
func pluginEnv(environ, deny, allow []string) []string {
	out := make([]string, 0, len(environ))
	urls := slices.Contains(deny, DenyURLPasswords)
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if denied(name, deny, allow) || (urls && urlWithPassword(value) && !slices.Contains(allow, name)) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// urlWithPassword reports whether v holds a URL whose user part carries a
// password (scheme://user:password@host).
func urlWithPassword(v string) bool {
	i := strings.Index(v, "://")
	if i < 0 {
		return false
	}
	rest := v[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	at := strings.LastIndexByte(rest, '@')
	return at >= 0 && strings.IndexByte(rest[:at], ':') >= 0
}

func denied(name string, deny, allow []string) bool {
	for _, a := range allow {
		if a == name {
			return false
		}
	}
	up := strings.ToUpper(name)
	for _, pat := range deny {
		if ok, _ := path.Match(strings.ToUpper(pat), up); ok {
			return true
		}
	}
	return false
}
