# experiments/lib.sh -- what every experiments/NAME/run.sh shares. A script
# is run by `rooftune experiment run NAME [--quick] [-- ARGS]` from the
# project root, with this environment:
#   ROOFTUNE        the rooftune binary that runs it
#   RT_ROOT         the project root (the working directory)
#   RT_OUT          its output folder: at the start it holds only rooftune's
#                   stamp .rooftune-experiment (or, with --force, what was
#                   in the folder already: write, never delete, others' files)
#   RT_NAME         the experiment's name
#   RT_QUICK        1 with --quick (fewer repeats, smaller sizes), else 0
#   RT_FINGERPRINT  the host's fingerprint (this machine: for what the script
#                   measures; recorded data carries its own); RT_VERSION
#                   rooftune's version
#   RT_CWD          the folder rooftune was run from (file operands are
#                   relative to it: rt_abs)
# and it sources this file, which gives:
#   rt_abs PATH            PATH as the user meant it: relative to RT_CWD
#                          when it names something there, else unchanged
#                          (relative to the project root, as before)
#   rt ARGS...             run rooftune; the command line is logged in
#                          commands.txt (as `rooftune ...`, paths relative to
#                          the project root); stops the experiment on failure
#   copy SRC DST           copy database SRC to DST with `rooftune db copy`
#                          (SQLite's backup: a consistent snapshot, -wal
#                          included, even while a writer has SRC open; a
#                          plain cp can miss committed trials or tear the
#                          file), then `rooftune db init` on DST: the copy
#                          is the experiment's own and is brought to this
#                          rooftune's schema (recorded databases may be
#                          older; read-only commands refuse an older
#                          schema); both logged in commands.txt (the
#                          databases the logged commands start from)
#   report_begin TITLE     start report.md: title, mode, date, the machine
#                          (rooftune targets), rooftune's version and commit
#   report_data DB         append "## The data": the targets of DB holding
#                          trials (name, fingerprint, CPU model, trials), the
#                          machines whose measurements a run on recorded
#                          data analyses (not the one running it)
#   report TEXT...         append a paragraph (or a table) to report.md
#   report_file FILE       append a file's text to report.md
#   figure NAME CAPTION    link NAME.png and NAME.svg from report.md
#   plot NAME              run gnuplot on stdin with PNG and SVG terminals
#                          set, writing NAME.png and NAME.svg (the script
#                          is kept as NAME.gp); the body sets no terminal;
#                          without gnuplot (the GPU machine) only NAME.gp,
#                          and a line on stderr
#   report_end             seeds ($SEEDS), environment ($ENV_FIXED), the
#                          exact commands, the duration
# Tables are made from the CSV files by the scripts (awk); they depend
# only on the data and the seeds, so a rerun on recorded data gives the
# same tables.
set -eu
: "${ROOFTUNE:?run this through rooftune experiment run}"
: "${RT_OUT:?}" "${RT_NAME:?}" "${RT_QUICK:=0}"
SEEDS=${SEEDS:-}
ENV_FIXED=${ENV_FIXED:-}
REPORT="$RT_OUT/report.md"
: > "$RT_OUT/commands.txt"
T_START=$(date +%s)

# log PROGRAM ARGS...: one line of commands.txt, quoted for sh
log() {
  printf '%s' "$1" >> "$RT_OUT/commands.txt"
  shift
  for a in "$@"; do
    case $a in
      *[!A-Za-z0-9_./:=,%+-]*|'') printf " '%s'" "$(printf %s "$a" | sed "s/'/'\\\\''/g")" ;;
      *) printf ' %s' "$a" ;;
    esac
  done | sed "s|$RT_ROOT/||g" >> "$RT_OUT/commands.txt"
  echo >> "$RT_OUT/commands.txt"
}
rt_abs() {
  case $1 in
    /*|'') printf '%s\n' "$1" ;;
    *) if [ -n "${RT_CWD:-}" ] && [ -e "$RT_CWD/$1" ]; then printf '%s\n' "$RT_CWD/$1"
       else printf '%s\n' "$1"; fi ;;
  esac
}
rt() { log rooftune "$@"; "$ROOFTUNE" "$@"; }
copy() { rt db copy --db "$1" --out "$2" > /dev/null && rt db init --db "$2" > /dev/null; }

report() { printf '%s\n\n' "$*" >> "$REPORT"; }
report_file() { cat "$1" >> "$REPORT"; echo >> "$REPORT"; }

report_begin() {
  {
    echo "# $1"
    echo
    echo "Experiment \`$RT_NAME\`, $( [ "$RT_QUICK" = 1 ] && echo 'quick run (--quick)' || echo 'full run' )," \
         "$(date -u '+%Y-%m-%d %H:%M UTC'); rooftune $RT_VERSION," \
         "commit $(git -C "$RT_ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)."
    echo "The question, the method and how to read this are in"
    echo "[experiments/$RT_NAME/README.md](../../../$RT_NAME/README.md)."
    echo
    echo "## The machine"
    echo
    echo '```'
    "$ROOFTUNE" targets | sed -n '/^host/,/fingerprint/p'
    echo '```'
    echo
  } > "$REPORT"
}

report_data() {
  report "## The data

The trials analysed here were measured on these targets of \`$(basename "$1")\`
(commands on recorded data take their target from the data, whatever machine runs them):

| target | fingerprint | CPU or device | trials |
|---|---|---|---|
$(sqlite3 -batch -noheader -separator ' | ' "$1" "SELECT '| ' || g.name, g.fingerprint,
    coalesce(json_extract(g.description, '\$.model'), json_extract(g.description, '\$.device'), '-'),
    count(t.id) || ' |' FROM targets g JOIN campaigns c ON c.target_id = g.id
    JOIN trials t ON t.campaign_id = c.id GROUP BY g.id ORDER BY g.id")"
}

figure() {
  report "![$2]($1.png)

*$2* ([SVG]($1.svg), data in the CSV files beside it)"
}

plot() {
  cat > "$RT_OUT/$1.gp"
  if ! command -v gnuplot > /dev/null 2>&1; then   # a machine without it: the script stays
    echo "$RT_NAME: gnuplot is not installed here: $1.png and $1.svg not drawn ($1.gp kept)" >&2
    return 0
  fi
  gnuplot -e "set terminal pngcairo size 1000,650 font 'DejaVu Sans,11'; set output '$RT_OUT/$1.png'" \
    "$RT_OUT/$1.gp"
  gnuplot -e "set terminal svg size 1000,650 font 'DejaVu Sans,11' background rgb 'white'; set output '$RT_OUT/$1.svg'" \
    "$RT_OUT/$1.gp"
}

report_end() {
  {
    echo "## Reproducing this"
    echo
    [ -n "$SEEDS" ] && echo "Seeds: $SEEDS." && echo
    [ -n "$ENV_FIXED" ] && echo "Fixed environment: $ENV_FIXED." && echo
    echo "From the project root, \`rooftune experiment run $RT_NAME$( [ "$RT_QUICK" = 1 ] && echo ' --quick')\`"
    echo "ran these commands (also in \`commands.txt\`):"
    echo
    echo '```'
    cat "$RT_OUT/commands.txt"
    echo '```'
    echo
    echo "It took $(( $(date +%s) - T_START )) s."
  } >> "$REPORT"
}
