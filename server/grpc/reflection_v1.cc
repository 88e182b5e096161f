#include "server/grpc/reflection_v1.h"

#include <set>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"

namespace invariant::server {
namespace {

namespace rv1 = grpc::reflection::v1;
using google::protobuf::DescriptorPool;
using google::protobuf::FileDescriptor;

void SetError(grpc::StatusCode code, const std::string& message,
              rv1::ServerReflectionResponse* response) {
  response->mutable_error_response()->set_error_code(static_cast<int>(code));
  response->mutable_error_response()->set_error_message(message);
}

// `file` and its imports, dependencies first, skipping those in `sent`.
void AddFile(const FileDescriptor* file, std::set<std::string>* sent,
             rv1::FileDescriptorResponse* out) {
  if (!sent->insert(file->name()).second) return;
  for (int i = 0; i < file->dependency_count(); ++i) AddFile(file->dependency(i), sent, out);
  google::protobuf::FileDescriptorProto proto;
  file->CopyTo(&proto);
  proto.SerializeToString(out->add_file_descriptor_proto());
}

}  // namespace

grpc::Status ReflectionV1Service::ServerReflectionInfo(
    grpc::ServerContext* /*context*/,
    grpc::ServerReaderWriter<rv1::ServerReflectionResponse, rv1::ServerReflectionRequest>* stream) {
  const DescriptorPool* pool = DescriptorPool::generated_pool();
  std::set<std::string> sent;  // files already sent on this stream
  rv1::ServerReflectionRequest request;
  while (stream->Read(&request)) {
    rv1::ServerReflectionResponse response;
    response.set_valid_host(request.host());
    *response.mutable_original_request() = request;
    const FileDescriptor* file = nullptr;
    switch (request.message_request_case()) {
      case rv1::ServerReflectionRequest::kListServices:
        for (const std::string& name : services_) {
          response.mutable_list_services_response()->add_service()->set_name(name);
        }
        break;
      case rv1::ServerReflectionRequest::kFileByFilename:
        file = pool->FindFileByName(request.file_by_filename());
        if (file == nullptr) SetError(grpc::StatusCode::NOT_FOUND, "file not found", &response);
        break;
      case rv1::ServerReflectionRequest::kFileContainingSymbol:
        file = pool->FindFileContainingSymbol(request.file_containing_symbol());
        if (file == nullptr) SetError(grpc::StatusCode::NOT_FOUND, "symbol not found", &response);
        break;
      case rv1::ServerReflectionRequest::kFileContainingExtension: {
        const auto* type =
            pool->FindMessageTypeByName(request.file_containing_extension().containing_type());
        const auto* extension =
            type == nullptr ? nullptr
                            : pool->FindExtensionByNumber(
                                  type, request.file_containing_extension().extension_number());
        if (extension != nullptr) file = extension->file();
        if (file == nullptr) {
          SetError(grpc::StatusCode::NOT_FOUND, "extension not found", &response);
        }
        break;
      }
      case rv1::ServerReflectionRequest::kAllExtensionNumbersOfType: {
        const auto* type = pool->FindMessageTypeByName(request.all_extension_numbers_of_type());
        if (type == nullptr) {
          SetError(grpc::StatusCode::NOT_FOUND, "type not found", &response);
          break;
        }
        std::vector<const google::protobuf::FieldDescriptor*> extensions;
        pool->FindAllExtensions(type, &extensions);
        rv1::ExtensionNumberResponse* numbers = response.mutable_all_extension_numbers_response();
        numbers->set_base_type_name(type->full_name());
        for (const auto* e : extensions) numbers->add_extension_number(e->number());
        break;
      }
      default:
        SetError(grpc::StatusCode::UNIMPLEMENTED, "unknown request", &response);
    }
    if (file != nullptr) AddFile(file, &sent, response.mutable_file_descriptor_response());
    if (!stream->Write(response)) break;
  }
  return grpc::Status::OK;
}

}  // namespace invariant::server
