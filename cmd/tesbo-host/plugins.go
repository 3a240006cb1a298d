package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/host/loader"
	"github.com/tesbo/tesbo/sdk"
)

func newPluginsCmd() *cobra.Command {
	var c common
	cmd := &cobra.Command{
		Use:   "plugins [--plugins DIR]",
		Short: "List the objectives and acquisitions found",
		Long: `List what a plugins directory provides: every objective (with its
parameter space) and acquisition plugin, each with its kind (objective,
suggester, acquisition), source (executable, go-source, script) and SHA-256
(for --plugin-sha256), and the load error of every broken entry. Go source
plugins are built on first use. The built-in acquisitions are listed too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := c.logger()
			if err != nil {
				return err
			}
			dir := c.pluginsDir("")
			reg, err := openPlugins(cmd.Context(), &c, dir, log)
			if err != nil {
				return err
			}
			defer reg.Close()
			printPlugins(os.Stdout, dir, reg.List(cmd.Context()))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.plugins, "plugins", "", "plugins directory (default $TESBO_PLUGINS or ./plugins)")
	f.StringVar(&c.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn, error")
	f.BoolVar(&c.unrestricted, "unrestricted", false, "give Yaegi scripts the whole standard library")
	f.StringArrayVar(&c.checksums, "plugin-sha256", nil, "NAME=HEX: refuse to run unless plugin NAME (an entry, or an objective as --objective names it) has SHA-256 HEX (repeatable)")
	f.StringArrayVar(&c.envAllow, "plugin-env", nil, pluginEnvHelp)
	f.StringVar(&c.pluginMemory, "plugin-memory", "", pluginMemoryHelp)
	return cmd
}

func printPlugins(w io.Writer, dir string, ps []loader.Plugin) {
	fmt.Fprintf(w, "plugins in %s:\n", dir)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tSOURCE\tSPACE / ERROR")
	broken := 0
	for _, p := range ps {
		detail := ""
		if p.Err == nil && p.Info != nil {
			if err := host.CheckObjective(*p.Info); err != nil {
				p.Err = fmt.Errorf("no study can take it: %w", err)
			}
		}
		switch {
		case p.Err != nil:
			broken++
			detail = "ERROR: " + oneLine(p.Err.Error())
		case p.Info != nil:
			detail = describeSpace(*p.Info)
		default:
			detail = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cell(p.Name), p.Kind, p.Source, cell(detail))
	}
	if len(ps) == 0 {
		fmt.Fprintln(tw, "(none)\t\t\t")
	}
	tw.Flush()
	fmt.Fprintf(w, "\nbuilt-in acquisitions: %s\n", strings.Join(acq.Names(), " "))
	var sums []string
	for _, p := range ps {
		if p.SHA256 != "" && p.Err == nil {
			sums = append(sums, cell(fmt.Sprintf("  %s=%s", p.Unit, p.SHA256)))
		}
	}
	if len(sums) > 0 {
		fmt.Fprintf(w, "\nchecksums (--plugin-sha256):\n%s\n", strings.Join(dedup(sums), "\n"))
	}
	if broken > 0 {
		fmt.Fprintf(w, "\n%d plugin(s) failed to load\n", broken)
	}
}

// describeSpace renders a space as "x1 float [-5, 10]; x2 int [0, 15]",
// a conditional parameter with its condition ("m float [0, 1] if opt =
// sgd"), plus the direction and known optimum.
func describeSpace(info sdk.Info) string {
	parts := make([]string, len(info.Params))
	for i, p := range info.Params {
		parts[i] = host.ParamText(p)
	}
	s := strings.Join(parts, "; ")
	if info.Minimize {
		s += "; minimize"
	}
	if info.Optimum != nil {
		s += "; f* = " + g(*info.Optimum)
	}
	if len(info.Outputs) > 0 {
		s += "; outputs " + describeOutputs(info)
	}
	return s
}

func g(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func dedup(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
