// PLACEHOLDER: the config layer's first translation unit; removed once loaders exist.
namespace attnsim::config {}
