module isolde-bench-porcupine

go 1.16

require github.com/anishathalye/porcupine v0.0.0

replace github.com/anishathalye/porcupine => ./porcupine
