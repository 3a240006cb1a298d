// Command facerec is tesbo's face-recognition attack objective plugin: it
// edits an attacker's face with the TES paper's eight physically realizable
// edits and reports the distance d from the edited face to the nearest
// gallery face as judged by a black-box face-recognition system (default:
// @vladmandic/face-api in a Node sidecar); the attack succeeds when d < θ
// with full face detection on the edited image. It only reads the attacker photo and the gallery it is given
// (defaults: face-api's demo photos). See package attack for what it
// measures and its --param keys, and PROTOCOL.md for the FRS protocol.
//
// The host builds and starts it (tesbo-host run --objective facerec); it
// is not meant to be run by hand.
package main

import (
	"os"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/plugins/facerec/attack"
	"github.com/tesbo/tesbo/sdk"
)

func main() {
	log := pluginLogger()
	obj := attack.NewObjective(log)
	sdk.ServeObjective(obj)
	// The host is done with the plugin: save the best figure, stop sidecars.
	if err := obj.Close(); err != nil {
		log.Error().Err(err).Msg("facerec: shutdown")
	}
}

// pluginLogger logs JSON lines to the process's original stderr with
// hclog's field names, which the host parses and re-logs tagged with the
// plugin's name. It captures os.Stderr before sdk's serving redirects it.
func pluginLogger() zerolog.Logger {
	zerolog.LevelFieldName = "@level"
	zerolog.MessageFieldName = "@message"
	zerolog.TimestampFieldName = "@timestamp"
	zerolog.TimeFieldFormat = "2006-01-02T15:04:05.000000Z07:00"
	level := zerolog.InfoLevel
	if l, err := zerolog.ParseLevel(os.Getenv("TESBO_PLUGIN_LOG_LEVEL")); err == nil && l != zerolog.NoLevel {
		level = l
	}
	return zerolog.New(os.Stderr).Level(level).With().Timestamp().Str("@module", "facerec").Logger()
}
