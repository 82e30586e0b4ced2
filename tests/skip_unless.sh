# Shared by the script tests (sourced, from the build tree): skip the test
# (exit 77) unless what it needs is there.

# The library was built with the OpenCL backend (config.h says so).
skip_unless_opencl() {
    if ! grep -q 'define PV_HAVE_OPENCL 1' config.h 2>/dev/null; then
        echo "SKIP: built without the OpenCL backend"
        exit 77
    fi
}

# $1, a command the test runs, is on the PATH; $2 says what it is for.
skip_unless_command() {
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "SKIP: no $1${2:+ $2}"
        exit 77
    fi
}
