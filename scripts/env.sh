# Source me (`source scripts/env.sh`, from any directory): puts the attnsim Python module on PYTHONPATH, sets ATTNSIM to the binary, and makes `attnsim` an alias for it.
# The build directory is build/ beside this script, or $ATTNSIM_BUILD_DIR (as scripts/build.sh).
# Use the module with Debian's /usr/bin/python3, which has numpy, pandas, h5py and matplotlib.
_attnsim_root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
_attnsim_build="${ATTNSIM_BUILD_DIR:-$_attnsim_root/build}"
_attnsim_build="$(cd "$_attnsim_build" 2>/dev/null && pwd || echo "$_attnsim_build")"
export ATTNSIM="$_attnsim_build/attnsim"
case ":${PYTHONPATH:-}:" in
  *":$_attnsim_build/python:"*) ;;
  *) export PYTHONPATH="$_attnsim_build/python${PYTHONPATH:+:$PYTHONPATH}" ;;
esac
alias attnsim='"$ATTNSIM"'
[ -x "$ATTNSIM" ] && [ -d "$_attnsim_build/python/attnsim" ] ||
  echo "scripts/env.sh: $_attnsim_build has no attnsim build yet: run scripts/build.sh" >&2
unset _attnsim_root _attnsim_build
