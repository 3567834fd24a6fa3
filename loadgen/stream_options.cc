#include "loadgen/stream_options.h"

namespace gmmscore {

void AddChannelOptions(Args& args) {
  args.Add({"server", "HOST:PORT", "the gmmscored to talk to"})
      .Add({"plaintext", "", "no TLS (the server must run with --plaintext)"})
      .Add({"ca-cert", "PEM", "CA certificates that sign the server's (default: system roots)"})
      .Add({"client-cert", "PEM", "this client's certificate, for a server that asks (mTLS)"})
      .Add({"client-key", "PEM", "the key of --client-cert"})
      .Add({"server-name", "NAME", "check the server certificate for NAME, not the address"});
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> ChannelFromArgs(const Args& args,
                                                               bool own_connection) {
  if (!args.Has("server")) return absl::InvalidArgumentError("--server is required");
  client::ChannelOptions o;
  o.server = args.Get("server");
  o.plaintext = args.GetBool("plaintext");
  o.ca_cert_file = args.Get("ca-cert");
  o.client_cert_file = args.Get("client-cert");
  o.client_key_file = args.Get("client-key");
  o.server_name_override = args.Get("server-name");
  o.own_connection = own_connection;
  return client::MakeChannel(o);
}

}  // namespace gmmscore
