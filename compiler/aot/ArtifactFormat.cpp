//===- ArtifactFormat.cpp - The .mdlc file: layout, reader and writer -----===//

#include "aot/ArtifactFormat.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>

using namespace modelc;
using namespace modelc::aot;
namespace endian = llvm::support::endian;
namespace json = llvm::json;

char ArtifactError::ID = 0;

void ArtifactError::log(llvm::raw_ostream &os) const { os << message; }

std::error_code ArtifactError::convertToErrorCode() const { return llvm::inconvertibleErrorCode(); }

namespace {

/// Sections start at multiples of this, so the object code and the weights
/// are as aligned in a mapped file as in a fresh allocation.
constexpr size_t kSectionAlignment = 64;

constexpr llvm::StringLiteral kMetaSection("meta");
constexpr llvm::StringLiteral kSignatureSection("signature");
constexpr llvm::StringLiteral kStateSection("state");
constexpr llvm::StringLiteral kObjectSection("cpu.object");
constexpr llvm::StringLiteral kWeightsSection("weights");
constexpr llvm::StringLiteral kPlanSection("device.plan");
/// Per GPU: "cuda<N>" + one of these.
constexpr llvm::StringLiteral kCubinSuffix(".cubin");
constexpr llvm::StringLiteral kPtxSuffix(".ptx");
constexpr llvm::StringLiteral kSourceSuffix(".cu");

std::string gpuSection(int device, llvm::StringRef suffix) {
  return ("cuda" + llvm::Twine(device) + suffix).str();
}

llvm::Error artifactError(ArtifactErrorKind kind, llvm::StringRef name, const llvm::Twine &what) {
  return llvm::make_error<ArtifactError>(kind, (name + ": " + what).str());
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

json::Value dimToJson(const SymbolicDim &dim) {
  if (std::optional<int64_t> k = dim.asConstant())
    return *k;
  if (std::optional<llvm::StringRef> s = dim.asSymbol())
    return *s;
  json::Array terms;
  for (const DimTerm &t : dim.terms) {
    json::Array term{t.coeff};
    for (const std::string &s : t.symbols)
      term.push_back(s);
    terms.push_back(std::move(term));
  }
  return terms;
}

json::Value tensorSpecToJson(const TensorSpec &spec) {
  json::Array shape;
  for (const SymbolicDim &d : spec.shape)
    shape.push_back(dimToJson(d));
  json::Object object{{"dtype", runtime::dtypeName(spec.dtype)},
                      {"shape", std::move(shape)},
                      {"device", spec.device.str()},
                      {"declared", spec.declared}};
  if (!spec.name.empty())
    object["name"] = spec.name;
  return object;
}

json::Value signatureToJson(const Artifact &artifact) {
  json::Array fns;
  for (const EntryFn &fn : artifact.fns) {
    json::Array params, results;
    for (const TensorSpec &p : fn.params)
      params.push_back(tensorSpecToJson(p));
    for (const TensorSpec &r : fn.results)
      results.push_back(tensorSpecToJson(r));
    fns.push_back(json::Object{{"name", fn.name},
                               {"symbol", fn.symbol},
                               {"params", std::move(params)},
                               {"results", std::move(results)}});
  }
  return json::Object{{"fns", std::move(fns)}};
}

json::Value stateToJson(const Artifact &artifact) {
  json::Array entries;
  for (const runtime::StateEntry &e : artifact.state) {
    json::Object entry{{"name", e.name},
                       {"kind", runtime::stateKindName(e.kind)},
                       {"dtype", runtime::dtypeName(e.dtype)},
                       {"shape", json::Array(e.shape)},
                       {"device", e.device.str()}};
    // Optional, so artifacts without fills read as before.
    if (e.fillWhenMissing)
      entry["fill_when_missing"] = *e.fillWhenMissing;
    entries.push_back(std::move(entry));
  }
  return json::Object{{"state", std::move(entries)}};
}

json::Value gpusToJson(const Artifact &artifact) {
  json::Array gpus;
  for (const GpuCode &gpu : artifact.gpus)
    gpus.push_back(json::Object{
        {"device", gpu.device}, {"cubinArch", gpu.cubinArch}, {"ptxArch", gpu.ptxArch}});
  return gpus;
}

json::Value metaToJson(const Artifact &artifact) {
  return json::Object{{"target", json::Object{{"triple", artifact.target.triple},
                                              {"cpu", artifact.target.cpu},
                                              {"features", json::Array(artifact.target.features)}}},
                      {"model", json::Object{{"name", artifact.modelName},
                                             {"args", artifact.modelArgs},
                                             {"device", artifact.modelDevice}}},
                      {"runtimeSymbols", json::Array(artifact.runtimeSymbols)},
                      {"gpus", gpusToJson(artifact)}};
}

std::string jsonText(json::Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", value);
  return text;
}

void writeU32(std::string &out, size_t at, uint32_t value) {
  endian::write32le(out.data() + at, value);
}
void writeU64(std::string &out, size_t at, uint64_t value) {
  endian::write64le(out.data() + at, value);
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// Reads the JSON sections, naming the file and the section in every error.
class JsonReader {
public:
  JsonReader(llvm::StringRef file, llvm::StringRef section) : file(file), section(section) {}

  llvm::Error malformed(const llvm::Twine &what) const {
    return artifactError(ArtifactErrorKind::Malformed, file,
                         "section '" + section + "' is malformed: " + what);
  }

  llvm::Expected<json::Value> parse(llvm::StringRef text) const {
    llvm::Expected<json::Value> value = json::parse(text);
    if (!value)
      return malformed(llvm::toString(value.takeError()));
    return value;
  }

  llvm::Expected<const json::Object *> object(const json::Value &v, llvm::StringRef what) const {
    if (const json::Object *o = v.getAsObject())
      return o;
    return malformed(what + " is not an object");
  }
  llvm::Expected<const json::Array *> array(const json::Object &o, llvm::StringRef key) const {
    if (const json::Array *a = o.getArray(key))
      return a;
    return malformed("'" + key + "' is missing or not an array");
  }
  llvm::Expected<std::string> string(const json::Object &o, llvm::StringRef key) const {
    if (std::optional<llvm::StringRef> s = o.getString(key))
      return s->str();
    return malformed("'" + key + "' is missing or not a string");
  }
  llvm::Expected<std::vector<std::string>> strings(const json::Object &o,
                                                   llvm::StringRef key) const {
    llvm::Expected<const json::Array *> a = array(o, key);
    if (!a)
      return a.takeError();
    std::vector<std::string> out;
    for (const json::Value &v : **a) {
      std::optional<llvm::StringRef> s = v.getAsString();
      if (!s)
        return malformed("'" + key + "' holds a non-string");
      out.push_back(s->str());
    }
    return out;
  }
  llvm::Expected<runtime::DType> dtype(const json::Object &o) const {
    llvm::Expected<std::string> name = string(o, "dtype");
    if (!name)
      return name.takeError();
    if (std::optional<runtime::DType> d = runtime::dtypeFromName(*name))
      return *d;
    return malformed("unknown dtype '" + *name + "'");
  }
  llvm::Expected<runtime::Device> device(const json::Object &o) const {
    llvm::Expected<std::string> text = string(o, "device");
    if (!text)
      return text.takeError();
    llvm::Expected<runtime::Device> d = runtime::parseDevice(*text);
    if (!d)
      return malformed(llvm::toString(d.takeError()));
    return *d;
  }

  llvm::Expected<SymbolicDim> dim(const json::Value &v) const {
    if (std::optional<int64_t> k = v.getAsInteger())
      return SymbolicDim::constant(*k);
    if (std::optional<llvm::StringRef> s = v.getAsString())
      return SymbolicDim::symbol(*s);
    const json::Array *terms = v.getAsArray();
    if (!terms)
      return malformed("a dim is neither an integer, a symbol nor a list of terms");
    SymbolicDim dim;
    for (const json::Value &t : *terms) {
      const json::Array *term = t.getAsArray();
      std::optional<int64_t> coeff =
          term && !term->empty() ? term->front().getAsInteger() : std::nullopt;
      if (!coeff)
        return malformed("a dim term is not [coefficient, symbol...]");
      DimTerm out{*coeff, {}};
      for (const json::Value &s : llvm::drop_begin(*term)) {
        std::optional<llvm::StringRef> name = s.getAsString();
        if (!name)
          return malformed("a dim term names a non-string symbol");
        out.symbols.push_back(name->str());
      }
      dim.terms.push_back(std::move(out));
    }
    return dim;
  }

  llvm::Expected<TensorSpec> tensorSpec(const json::Value &v, bool named) const {
    llvm::Expected<const json::Object *> o = object(v, "a parameter or result");
    if (!o)
      return o.takeError();
    TensorSpec spec;
    if (named) {
      llvm::Expected<std::string> name = string(**o, "name");
      if (!name)
        return name.takeError();
      spec.name = std::move(*name);
    }
    llvm::Expected<runtime::DType> d = dtype(**o);
    if (!d)
      return d.takeError();
    spec.dtype = *d;
    llvm::Expected<runtime::Device> dev = device(**o);
    if (!dev)
      return dev.takeError();
    spec.device = *dev;
    llvm::Expected<std::string> declared = string(**o, "declared");
    if (!declared)
      return declared.takeError();
    spec.declared = std::move(*declared);
    llvm::Expected<const json::Array *> shape = array(**o, "shape");
    if (!shape)
      return shape.takeError();
    for (const json::Value &dv : **shape) {
      llvm::Expected<SymbolicDim> dimension = dim(dv);
      if (!dimension)
        return dimension.takeError();
      spec.shape.push_back(std::move(*dimension));
    }
    return spec;
  }

private:
  llvm::StringRef file;
  llvm::StringRef section;
};

llvm::Error readMeta(llvm::StringRef text, llvm::StringRef file, Artifact &out) {
  JsonReader r(file, kMetaSection);
  llvm::Expected<json::Value> root = r.parse(text);
  if (!root)
    return root.takeError();
  llvm::Expected<const json::Object *> meta = r.object(*root, "the section");
  if (!meta)
    return meta.takeError();
  const json::Object *target = (*meta)->getObject("target");
  const json::Object *model = (*meta)->getObject("model");
  if (!target || !model)
    return r.malformed("'target' or 'model' is missing");
  llvm::Expected<std::string> triple = r.string(*target, "triple");
  llvm::Expected<std::string> cpu = r.string(*target, "cpu");
  llvm::Expected<std::vector<std::string>> features = r.strings(*target, "features");
  llvm::Expected<std::string> name = r.string(*model, "name");
  llvm::Expected<std::string> args = r.string(*model, "args");
  llvm::Expected<std::string> device = r.string(*model, "device");
  llvm::Expected<std::vector<std::string>> symbols = r.strings(**meta, "runtimeSymbols");
  if (llvm::Error err = llvm::joinErrors(
          llvm::joinErrors(llvm::joinErrors(triple.takeError(), cpu.takeError()),
                           llvm::joinErrors(features.takeError(), name.takeError())),
          llvm::joinErrors(llvm::joinErrors(args.takeError(), device.takeError()),
                           symbols.takeError())))
    return err;
  out.target = {std::move(*triple), std::move(*cpu), std::move(*features)};
  out.modelName = std::move(*name);
  out.modelArgs = std::move(*args);
  out.modelDevice = std::move(*device);
  out.runtimeSymbols = std::move(*symbols);
  llvm::Expected<const json::Array *> gpus = r.array(**meta, "gpus");
  if (!gpus)
    return gpus.takeError();
  for (const json::Value &v : **gpus) {
    llvm::Expected<const json::Object *> gpu = r.object(v, "a gpu");
    if (!gpu)
      return gpu.takeError();
    std::optional<int64_t> device = (*gpu)->getInteger("device");
    if (!device || *device < 0 || *device > 127)
      return r.malformed("a gpu has no device index");
    llvm::Expected<std::string> cubinArch = r.string(**gpu, "cubinArch");
    llvm::Expected<std::string> ptxArch = r.string(**gpu, "ptxArch");
    if (llvm::Error err = llvm::joinErrors(cubinArch.takeError(), ptxArch.takeError()))
      return err;
    if (llvm::any_of(out.gpus, [&](const GpuCode &g) { return g.device == *device; }))
      return r.malformed("cuda:" + llvm::Twine(*device) + " is listed twice");
    out.gpus.push_back({int(*device), std::move(*cubinArch), {}, std::move(*ptxArch), {}, {}});
  }
  return llvm::Error::success();
}

llvm::Error readSignature(llvm::StringRef text, llvm::StringRef file, Artifact &out) {
  JsonReader r(file, kSignatureSection);
  llvm::Expected<json::Value> root = r.parse(text);
  if (!root)
    return root.takeError();
  llvm::Expected<const json::Object *> sig = r.object(*root, "the section");
  if (!sig)
    return sig.takeError();
  llvm::Expected<const json::Array *> fns = r.array(**sig, "fns");
  if (!fns)
    return fns.takeError();
  for (const json::Value &v : **fns) {
    llvm::Expected<const json::Object *> o = r.object(v, "an entry fn");
    if (!o)
      return o.takeError();
    EntryFn fn;
    llvm::Expected<std::string> name = r.string(**o, "name");
    llvm::Expected<std::string> symbol = r.string(**o, "symbol");
    llvm::Expected<const json::Array *> params = r.array(**o, "params");
    llvm::Expected<const json::Array *> results = r.array(**o, "results");
    if (llvm::Error err = llvm::joinErrors(
            llvm::joinErrors(llvm::joinErrors(name.takeError(), symbol.takeError()),
                             params.takeError()),
            results.takeError()))
      return err;
    if ((*results)->empty())
      return r.malformed("fn '" + *name + "' has no results");
    fn.name = std::move(*name);
    fn.symbol = std::move(*symbol);
    for (const json::Value &p : **params) {
      llvm::Expected<TensorSpec> spec = r.tensorSpec(p, /*named=*/true);
      if (!spec)
        return spec.takeError();
      fn.params.push_back(std::move(*spec));
    }
    for (const json::Value &result : **results) {
      llvm::Expected<TensorSpec> spec = r.tensorSpec(result, /*named=*/false);
      if (!spec)
        return spec.takeError();
      fn.results.push_back(std::move(*spec));
    }
    out.fns.push_back(std::move(fn));
  }
  return llvm::Error::success();
}

llvm::Error readState(llvm::StringRef text, llvm::StringRef file, Artifact &out) {
  JsonReader r(file, kStateSection);
  llvm::Expected<json::Value> root = r.parse(text);
  if (!root)
    return root.takeError();
  llvm::Expected<const json::Object *> section = r.object(*root, "the section");
  if (!section)
    return section.takeError();
  llvm::Expected<const json::Array *> entries = r.array(**section, "state");
  if (!entries)
    return entries.takeError();
  for (const json::Value &v : **entries) {
    llvm::Expected<const json::Object *> o = r.object(v, "a state entry");
    if (!o)
      return o.takeError();
    runtime::StateEntry e;
    llvm::Expected<std::string> name = r.string(**o, "name");
    llvm::Expected<std::string> kind = r.string(**o, "kind");
    llvm::Expected<runtime::DType> dtype = r.dtype(**o);
    llvm::Expected<runtime::Device> device = r.device(**o);
    llvm::Expected<const json::Array *> shape = r.array(**o, "shape");
    if (llvm::Error err = llvm::joinErrors(
            llvm::joinErrors(llvm::joinErrors(name.takeError(), kind.takeError()),
                             llvm::joinErrors(dtype.takeError(), device.takeError())),
            shape.takeError()))
      return err;
    e.name = std::move(*name);
    if (*kind == runtime::stateKindName(runtime::StateKind::Buffer))
      e.kind = runtime::StateKind::Buffer;
    else if (*kind != runtime::stateKindName(runtime::StateKind::Param))
      return r.malformed("unknown state kind '" + *kind + "'");
    e.dtype = *dtype;
    e.device = *device;
    for (const json::Value &d : **shape) {
      std::optional<int64_t> extent = d.getAsInteger();
      if (!extent || *extent < 0)
        return r.malformed("state '" + e.name + "' has a dim that is not a size");
      e.shape.push_back(*extent);
    }
    if (const json::Value *fill = (*o)->get("fill_when_missing")) {
      e.fillWhenMissing = fill->getAsNumber();
      if (!e.fillWhenMissing)
        return r.malformed("state '" + e.name + "' has a fill that is not a number");
    }
    out.state.push_back(std::move(e));
  }
  return llvm::Error::success();
}

std::string hexChecksum(uint64_t value) { return "0x" + llvm::utohexstr(value, true, 16); }

} // namespace

//===----------------------------------------------------------------------===//
// SymbolicDim, TensorSpec, TargetInfo, Artifact
//===----------------------------------------------------------------------===//

SymbolicDim SymbolicDim::constant(int64_t value) {
  SymbolicDim d;
  if (value != 0)
    d.terms.push_back({value, {}});
  return d;
}

SymbolicDim SymbolicDim::symbol(llvm::StringRef name) {
  SymbolicDim d;
  d.terms.push_back({1, {name.str()}});
  return d;
}

std::optional<int64_t> SymbolicDim::asConstant() const {
  if (terms.empty())
    return 0;
  if (terms.size() == 1 && terms[0].symbols.empty())
    return terms[0].coeff;
  return std::nullopt;
}

std::optional<llvm::StringRef> SymbolicDim::asSymbol() const {
  if (terms.size() == 1 && terms[0].coeff == 1 && terms[0].symbols.size() == 1)
    return llvm::StringRef(terms[0].symbols[0]);
  return std::nullopt;
}

std::optional<int64_t> SymbolicDim::evaluate(const llvm::StringMap<int64_t> &symbols) const {
  int64_t sum = 0;
  for (const DimTerm &t : terms) {
    int64_t product = t.coeff;
    for (const std::string &s : t.symbols) {
      auto it = symbols.find(s);
      if (it == symbols.end() || llvm::MulOverflow(product, it->second, product))
        return std::nullopt;
    }
    if (llvm::AddOverflow(sum, product, sum))
      return std::nullopt;
  }
  return sum;
}

std::string SymbolicDim::str() const {
  if (terms.empty())
    return "0";
  std::string out;
  for (const DimTerm &t : terms) {
    int64_t coeff = t.coeff;
    if (!out.empty()) {
      out += coeff < 0 ? " - " : " + ";
      coeff = coeff < 0 ? -coeff : coeff;
    }
    std::string factors = llvm::join(t.symbols, "*");
    if (factors.empty())
      out += std::to_string(coeff);
    else if (coeff == 1)
      out += factors;
    else if (coeff == -1)
      out += "-" + factors;
    else
      out += std::to_string(coeff) + "*" + factors;
  }
  return out;
}

std::string TensorSpec::shapeString() const {
  return "[" +
         llvm::join(llvm::map_range(shape, [](const SymbolicDim &d) { return d.str(); }), ", ") +
         "]";
}

TargetInfo TargetInfo::host() {
  TargetInfo info;
  info.triple = llvm::sys::getProcessTriple();
  info.cpu = llvm::sys::getHostCPUName().str();
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    if (feature.second)
      info.features.push_back(feature.first().str());
  llvm::sort(info.features);
  return info;
}

const EntryFn *Artifact::findFn(llvm::StringRef name) const {
  for (const EntryFn &fn : fns)
    if (fn.name == name)
      return &fn;
  return nullptr;
}

llvm::StringRef aot::modelcVersion() { return MODELC_VERSION; }

//===----------------------------------------------------------------------===//
// The container
//===----------------------------------------------------------------------===//

uint64_t aot::artifactChecksum(llvm::StringRef bytes) {
  size_t afterField = kChecksumOffset + 8;
  uint64_t parts[2] = {llvm::xxh3_64bits(bytes.take_front(kChecksumOffset)),
                       llvm::xxh3_64bits(bytes.drop_front(std::min(afterField, bytes.size())))};
  char buffer[16];
  endian::write64le(buffer, parts[0]);
  endian::write64le(buffer + 8, parts[1]);
  return llvm::xxh3_64bits(llvm::StringRef(buffer, sizeof(buffer)));
}

std::string aot::serializeArtifact(const Artifact &artifact, uint32_t formatVersion) {
  std::vector<std::pair<llvm::StringRef, std::string>> owned = {
      {kMetaSection, jsonText(metaToJson(artifact))},
      {kSignatureSection, jsonText(signatureToJson(artifact))},
      {kStateSection, jsonText(stateToJson(artifact))},
  };
  std::vector<std::pair<llvm::StringRef, llvm::StringRef>> sections;
  for (const auto &[name, text] : owned)
    sections.push_back({name, text});
  if (!artifact.isCuda() || !artifact.object.empty())
    sections.push_back({kObjectSection, artifact.object});
  if (artifact.weights)
    sections.push_back({kWeightsSection, *artifact.weights});
  if (artifact.devicePlan)
    sections.push_back({kPlanSection, *artifact.devicePlan});
  std::vector<std::string> gpuNames;
  gpuNames.reserve(artifact.gpus.size() * 3);
  for (const GpuCode &gpu : artifact.gpus)
    for (auto [suffix, bytes] : {std::pair{kCubinSuffix, gpu.cubin}, std::pair{kPtxSuffix, gpu.ptx},
                                 std::pair{kSourceSuffix, gpu.source}}) {
      gpuNames.push_back(gpuSection(gpu.device, suffix));
      sections.push_back({gpuNames.back(), bytes});
    }

  size_t tableEnd = kHeaderSize + sections.size() * kSectionEntrySize;
  std::string out(tableEnd, '\0');
  out.replace(0, kMagic.size(), kMagic.data(), kMagic.size());
  writeU32(out, 8, formatVersion);
  writeU32(out, 12, kHeaderSize);
  llvm::StringRef writer = llvm::StringRef(artifact.writerVersion).take_front(kWriterVersionSize);
  out.replace(16, writer.size(), writer.data(), writer.size());
  writeU32(out, 48, uint32_t(sections.size()));
  writeU64(out, 56, kHeaderSize);
  for (size_t i = 0; i < sections.size(); ++i) {
    out.resize(llvm::alignTo(out.size(), kSectionAlignment), '\0');
    size_t entry = kHeaderSize + i * kSectionEntrySize;
    llvm::StringRef name = sections[i].first;
    out.replace(entry, name.size(), name.data(), name.size());
    writeU64(out, entry + 16, out.size());
    writeU64(out, entry + 24, sections[i].second.size());
    out.append(sections[i].second.data(), sections[i].second.size());
  }
  writeU64(out, 32, out.size());
  writeU64(out, kChecksumOffset, artifactChecksum(out));
  return out;
}

std::optional<HeaderVersion> aot::readHeaderVersion(llvm::StringRef bytes) {
  if (bytes.size() < 16 + kWriterVersionSize || !bytes.starts_with(kMagic))
    return std::nullopt;
  llvm::StringRef writer = bytes.substr(16, kWriterVersionSize);
  return HeaderVersion{endian::read32le(bytes.data() + 8),
                       writer.take_until([](char c) { return c == '\0'; }).str()};
}

llvm::Expected<Artifact> aot::parseArtifact(llvm::StringRef bytes, llvm::StringRef name) {
  if (!bytes.starts_with(kMagic))
    return artifactError(ArtifactErrorKind::NotAnArtifact, name,
                         "not a modelc artifact (no .mdlc magic at the start of the file)");
  std::optional<HeaderVersion> version = readHeaderVersion(bytes);
  if (!version)
    return artifactError(ArtifactErrorKind::Truncated, name,
                         "truncated: " + llvm::Twine(bytes.size()) +
                             " bytes, shorter than the artifact header (" +
                             llvm::Twine(kHeaderSize) + " bytes)");
  if (version->formatVersion != kFormatVersion)
    return artifactError(ArtifactErrorKind::Version, name,
                         "artifact format version " + llvm::Twine(version->formatVersion) +
                             " (written by modelc " + version->writerVersion +
                             "), but this modelc (" + modelcVersion() + ") reads format version " +
                             llvm::Twine(kFormatVersion) + "; rebuild it with `modelc build`");
  if (bytes.size() < kHeaderSize)
    return artifactError(ArtifactErrorKind::Truncated, name,
                         "truncated: " + llvm::Twine(bytes.size()) +
                             " bytes, shorter than the artifact header (" +
                             llvm::Twine(kHeaderSize) + " bytes)");
  uint64_t fileSize = endian::read64le(bytes.data() + 32);
  if (fileSize != bytes.size())
    return artifactError(
        fileSize > bytes.size() ? ArtifactErrorKind::Truncated : ArtifactErrorKind::Corrupted, name,
        (fileSize > bytes.size() ? "truncated: " : "corrupted: ") + llvm::Twine(bytes.size()) +
            " bytes, but the header says " + llvm::Twine(fileSize));
  uint64_t stored = endian::read64le(bytes.data() + kChecksumOffset);
  uint64_t computed = artifactChecksum(bytes);
  if (stored != computed)
    return artifactError(ArtifactErrorKind::Corrupted, name,
                         "checksum mismatch (stored " + hexChecksum(stored) + ", computed " +
                             hexChecksum(computed) + "): the file is corrupted");

  // From here on the bytes are what the writer wrote: an inconsistency is a
  // writer bug, still reported rather than trusted.
  auto malformed = [&](const llvm::Twine &what) {
    return artifactError(ArtifactErrorKind::Malformed, name, "malformed: " + what);
  };
  if (endian::read32le(bytes.data() + 12) != kHeaderSize)
    return malformed("unexpected header size");
  uint32_t count = endian::read32le(bytes.data() + 48);
  uint64_t table = endian::read64le(bytes.data() + 56);
  if (table < kHeaderSize || table > bytes.size() ||
      count > (bytes.size() - table) / kSectionEntrySize)
    return malformed("the section table lies outside the file");
  llvm::StringMap<llvm::StringRef> sections;
  for (uint32_t i = 0; i < count; ++i) {
    const char *entry = bytes.data() + table + i * kSectionEntrySize;
    llvm::StringRef sectionName =
        llvm::StringRef(entry, kSectionNameSize).take_until([](char c) { return c == '\0'; });
    uint64_t offset = endian::read64le(entry + 16);
    uint64_t size = endian::read64le(entry + 24);
    if (offset > bytes.size() || size > bytes.size() - offset)
      return malformed("section '" + sectionName + "' lies outside the file");
    if (!sections.try_emplace(sectionName, bytes.substr(offset, size)).second)
      return malformed("section '" + sectionName + "' appears twice");
  }
  for (llvm::StringRef required : {kMetaSection, kSignatureSection, kStateSection})
    if (!sections.count(required))
      return malformed("no '" + required + "' section");

  Artifact out;
  out.writerVersion = version->writerVersion;
  if (llvm::Error err = readMeta(sections[kMetaSection], name, out))
    return err;
  // Every section is one this version knows; each GPU has its three.
  llvm::StringSet<> known = {kMetaSection,   kSignatureSection, kStateSection,
                             kObjectSection, kWeightsSection,   kPlanSection};
  for (GpuCode &gpu : out.gpus)
    for (auto [suffix, bytes] :
         {std::pair{kCubinSuffix, &gpu.cubin}, std::pair{kPtxSuffix, &gpu.ptx},
          std::pair{kSourceSuffix, &gpu.source}}) {
      std::string section = gpuSection(gpu.device, suffix);
      auto found = sections.find(section);
      if (found == sections.end())
        return malformed("no '" + section + "' section");
      *bytes = found->second;
      known.insert(section);
    }
  for (const auto &entry : sections)
    if (!known.contains(entry.getKey()))
      return artifactError(ArtifactErrorKind::Unsupported, name,
                           "unknown section '" + entry.getKey() + "'");
  if (!out.gpus.empty() && !sections.count(kPlanSection))
    return malformed("GPUs are listed but there is no '" + kPlanSection + "' section");
  if (!sections.count(kPlanSection) && !sections.count(kObjectSection))
    return malformed("no '" + kObjectSection + "' section");
  if (llvm::Error err = readSignature(sections[kSignatureSection], name, out))
    return err;
  if (llvm::Error err = readState(sections[kStateSection], name, out))
    return err;
  out.object = sections.lookup(kObjectSection);
  auto weights = sections.find(kWeightsSection);
  if (weights != sections.end())
    out.weights = weights->second;
  auto plan = sections.find(kPlanSection);
  if (plan != sections.end())
    out.devicePlan = plan->second;
  return out;
}
