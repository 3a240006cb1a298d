package loader

import (
	"path"
	"strings"
)

// DefaultEnvDeny lists the environment variables the host withholds from
// plugins unless Options.EnvDeny says otherwise: patterns in path.Match
// syntax, matched against the upper-cased variable name. They cover the
// usual ways secrets reach a process: any name containing PASS, KEY,
// SECRET, TOKEN, CREDENTIAL or AUTH (DB_PASS, STRIPE_KEY, SSH_AUTH_SOCK),
// PAT as a word of the name (GITHUB_PAT; not PATH), PostgreSQL's PG*
// variables (PGPASSWORD, PGPASSFILE, PGSERVICE), cloud accounts (AWS_*,
// AZURE_*) and connection strings. Everything else (PATH, HOME, GOCACHE,
// CUDA_*, ...) is passed through.
var DefaultEnvDeny = []string{
	"*PASS*", "*KEY*", "*SECRET*", "*TOKEN*", "*CREDENTIAL*", "*AUTH*",
	"PAT", "PAT_*", "*_PAT", "*_PAT_*",
	"PG*", "AWS_*", "AZURE_*", "GCP_SERVICE_ACCOUNT*",
	"GPG_AGENT_INFO", "*DATABASE_URL", "*_DSN", "NETRC",
}

// pluginEnv returns environ minus the variables matching deny, except those
// named in allow (exact names).
func pluginEnv(environ, deny, allow []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if denied(name, deny, allow) {
			continue
		}
		out = append(out, kv)
	}
	return out
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
