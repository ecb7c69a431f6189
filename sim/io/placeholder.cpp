// PLACEHOLDER: the io layer's first translation unit; removed once writers exist.
namespace attnsim::io {}
