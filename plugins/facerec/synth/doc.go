// Package synth renders the TES paper's eight "physically realizable" face
// edits (§5.3, Fig. 8) on an attacker's photo: beard, mustache, forehead
// scar, cheek scar, mole, eyeglasses (two parameters snapped to one of three
// styles: none, squared, round) and smile.
//
// The paper used an MMDA face synthesizer that is not available; this
// package draws the same eight edits directly, placed by the 68 face
// landmarks (iBUG/dlib order) so that they land on the face whatever its pose
// and size. Every parameter lies in [0, 1]; 0 is "off" (the image is left
// untouched) and the bounds keep the edits at a size and contrast a person
// could plausibly wear or grow. Rendering is deterministic: the same photo,
// landmarks and parameters give identical pixels (hair strands come from
// fixed-seed generators drawn once in New).
//
// Each edit changes pixels only inside its facial region (Region), which the
// tests check. Figure assembles the paper's Fig. 8 (original | synthesized |
// matched gallery face) as one PNG.
package synth
