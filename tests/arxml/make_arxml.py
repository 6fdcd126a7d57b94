#!/usr/bin/env python3
"""Writes testdata/arxml/echo_{server,client}.arxml: the secured echo pair of
examples/node/secured_{server,client}.json described in AUTOSAR terms, from the
AUTOSAR parameter and element names (docs/arxml.md):

* ECUC values of the SecOC module (SecOCTx/RxPduProcessing with SecOCDataId,
  SecOCFreshnessValueLength, SecOCFreshnessValueTruncLength,
  SecOCAuthInfoTruncLength, the secured-layer EcuC Pdu and the Csm job), of Csm
  (jobs, keys, MAC primitives: AES + CMAC with 32-byte keys) and of EcuC (Pdus
  with SysTPduToPduTriggeringRef);
* the system description's Ethernet cluster: SECURED-I-PDUs, PDU triggerings
  and SOCKET-CONNECTION-IPDU-IDENTIFIERs whose HEADER-ID is the SOME/IP Message
  ID (service << 16 | method or event);
* the SOME/IP service deployment (SOMEIP-SERVICE-INTERFACE-DEPLOYMENT, a
  PROVIDED- or REQUIRED-SOMEIP-SERVICE-INSTANCE, the machine mapping with the
  UDP port and the network endpoint's IPv4 address).

Run it after changing it and commit the output:
    python3 tests/arxml/make_arxml.py testdata/arxml
"""
import os
import sys

ECUC = "/AUTOSAR/EcucDefs"


def num(defn, value):
    return (f'<ECUC-NUMERICAL-PARAM-VALUE><DEFINITION-REF DEST="ECUC-INTEGER-PARAM-DEF">{defn}</DEFINITION-REF>'
            f'<VALUE>{value}</VALUE></ECUC-NUMERICAL-PARAM-VALUE>')


def text(defn, value):
    return (f'<ECUC-TEXTUAL-PARAM-VALUE><DEFINITION-REF DEST="ECUC-ENUMERATION-PARAM-DEF">{defn}</DEFINITION-REF>'
            f'<VALUE>{value}</VALUE></ECUC-TEXTUAL-PARAM-VALUE>')


def ref(defn, target, dest="ECUC-CONTAINER-VALUE", kind="ECUC-REFERENCE-DEF"):
    return (f'<ECUC-REFERENCE-VALUE><DEFINITION-REF DEST="{kind}">{defn}</DEFINITION-REF>'
            f'<VALUE-REF DEST="{dest}">{target}</VALUE-REF></ECUC-REFERENCE-VALUE>')


def container(name, defn, params="", refs="", subs=""):
    out = (f'<ECUC-CONTAINER-VALUE><SHORT-NAME>{name}</SHORT-NAME>'
           f'<DEFINITION-REF DEST="ECUC-PARAM-CONF-CONTAINER-DEF">{defn}</DEFINITION-REF>')
    if params:
        out += f'<PARAMETER-VALUES>{params}</PARAMETER-VALUES>'
    if refs:
        out += f'<REFERENCE-VALUES>{refs}</REFERENCE-VALUES>'
    if subs:
        out += f'<SUB-CONTAINERS>{subs}</SUB-CONTAINERS>'
    return out + '</ECUC-CONTAINER-VALUE>'


def module(name, subs):
    return (f'<ECUC-MODULE-CONFIGURATION-VALUES><SHORT-NAME>{name}</SHORT-NAME>'
            f'<DEFINITION-REF DEST="ECUC-MODULE-DEF">{ECUC}/{name}</DEFINITION-REF>'
            f'<CONTAINERS>{subs}</CONTAINERS></ECUC-MODULE-CONFIGURATION-VALUES>')


def secoc_pdu(direction, name, data_id, attempts=None):
    d = direction  # "Tx" or "Rx"
    base = f"{ECUC}/SecOC/SecOC{d}PduProcessing"
    params = (num(f"{base}/SecOCDataId", data_id) + num(f"{base}/SecOCFreshnessValueId", data_id)
              + num(f"{base}/SecOCFreshnessValueLength", 64) + num(f"{base}/SecOCFreshnessValueTruncLength", 16)
              + num(f"{base}/SecOCAuthInfoTruncLength", 64))
    if attempts:
        params += num(f"{base}/SecOCAuthenticationVerifyAttempts", attempts)
    job = "MacGenerateJob" if d == "Tx" else "MacVerifyJob"
    refs = ref(f"{base}/SecOC{d}AuthServiceConfigRef", f"/ActiveEcuC/Csm/CsmJobs/{job}")
    secured = container(
        "SecuredPdu", f"{base}/SecOC{d}SecuredPduLayer/SecOC{d}SecuredPdu",
        params=num(f"{base}/SecOC{d}SecuredPduLayer/SecOC{d}SecuredPdu/SecOCAuthPduHeaderLength", 0),
        refs=ref(f"{base}/SecOC{d}SecuredPduLayer/SecOC{d}SecuredPdu/SecOC{d}SecuredLayerPduRef",
                 f"/ActiveEcuC/EcuC/EcucConfigSet/EcucPduCollection/{name}_Secured"))
    layer = container("SecuredPduLayer", f"{base}/SecOC{d}SecuredPduLayer", subs=secured)
    authentic = container(
        "AuthenticPduLayer", f"{base}/SecOC{d}AuthenticPduLayer",
        params=text(f"{base}/SecOC{d}AuthenticPduLayer/SecOCPduType", "SECOC_IFPDU"),
        refs=ref(f"{base}/SecOC{d}AuthenticPduLayer/SecOC{d}AuthenticLayerPduRef",
                 f"/ActiveEcuC/EcuC/EcucConfigSet/EcucPduCollection/{name}"))
    return container(name, base, params=params, refs=refs, subs=authentic + layer)


def csm():
    jobs = ""
    for job, prim in (("MacGenerateJob", "MacGenerate"), ("MacVerifyJob", "MacVerify")):
        base = f"{ECUC}/Csm/CsmJobs/CsmJob"
        jobs += container(job, base, params=num(f"{base}/CsmJobId", 1 if prim == "MacGenerate" else 2),
                          refs=ref(f"{base}/CsmJobKeyRef", "/ActiveEcuC/Csm/CsmKeys/pair")
                          + ref(f"{base}/CsmJobPrimitiveRef", f"/ActiveEcuC/Csm/CsmPrimitives/{prim}"))
    prims = ""
    for prim in ("MacGenerate", "MacVerify"):
        base = f"{ECUC}/Csm/CsmPrimitives/Csm{prim}/Csm{prim}Config"
        cfg = container(f"{prim}Config", base,
                        params=text(f"{base}/Csm{prim}AlgorithmFamily", "CRYPTO_ALGOFAM_AES")
                        + text(f"{base}/Csm{prim}AlgorithmMode", "CRYPTO_ALGOMODE_CMAC")
                        + num(f"{base}/Csm{prim}AlgorithmKeyLength", 32)
                        + num(f"{base}/Csm{prim}ResultLength", 16))
        prims += container(prim, f"{ECUC}/Csm/CsmPrimitives/Csm{prim}", subs=cfg)
    keys = container("pair", f"{ECUC}/Csm/CsmKeys/CsmKey", params=num(f"{ECUC}/Csm/CsmKeys/CsmKey/CsmKeyId", 1))
    return module("Csm", container("CsmJobs", f"{ECUC}/Csm/CsmJobs", subs=jobs)
                  + container("CsmKeys", f"{ECUC}/Csm/CsmKeys", subs=keys)
                  + container("CsmPrimitives", f"{ECUC}/Csm/CsmPrimitives", subs=prims))


def ecuc_pdus(names):
    base = f"{ECUC}/EcuC/EcucConfigSet/EcucPduCollection/Pdu"
    pdus = ""
    for n in names:
        pdus += container(n, base, params=num(f"{base}/PduLength", 64))
        pdus += container(n + "_Secured", base, params=num(f"{base}/PduLength", 74),
                          refs=ref(f"{base}/SysTPduToPduTriggeringRef", f"/System/EthCluster/Channel/PT_{n}_Secured",
                                   dest="PDU-TRIGGERING", kind="ECUC-FOREIGN-REFERENCE-DEF"))
    coll = container("EcucPduCollection", f"{ECUC}/EcuC/EcucConfigSet/EcucPduCollection", subs=pdus)
    return module("EcuC", container("EcucConfigSet", f"{ECUC}/EcuC/EcucConfigSet", subs=coll))


def system(pdus, address):
    """pdus: [(name, header_id)]"""
    elements = ""
    triggerings = ""
    idents = ""
    for n, hid in pdus:
        elements += (f'<I-SIGNAL-I-PDU><SHORT-NAME>{n}</SHORT-NAME><LENGTH>64</LENGTH></I-SIGNAL-I-PDU>'
                     f'<SECURED-I-PDU><SHORT-NAME>{n}_Secured</SHORT-NAME><LENGTH>74</LENGTH>'
                     f'<PAYLOAD-REF DEST="PDU-TRIGGERING">/System/EthCluster/Channel/PT_{n}</PAYLOAD-REF>'
                     f'<SECURE-COMMUNICATION-PROPS><AUTH-INFO-TX-LENGTH>64</AUTH-INFO-TX-LENGTH>'
                     f'<FRESHNESS-VALUE-LENGTH>64</FRESHNESS-VALUE-LENGTH>'
                     f'<FRESHNESS-VALUE-TX-LENGTH>16</FRESHNESS-VALUE-TX-LENGTH></SECURE-COMMUNICATION-PROPS>'
                     f'</SECURED-I-PDU>')
        for t in (n, n + "_Secured"):
            dest = "SECURED-I-PDU" if t.endswith("_Secured") else "I-SIGNAL-I-PDU"
            triggerings += (f'<PDU-TRIGGERING><SHORT-NAME>PT_{t}</SHORT-NAME>'
                            f'<I-PDU-REF DEST="{dest}">/System/Pdus/{t}</I-PDU-REF></PDU-TRIGGERING>')
        idents += (f'<SOCKET-CONNECTION-IPDU-IDENTIFIER><HEADER-ID>{hid}</HEADER-ID>'
                   f'<PDU-TRIGGERING-REF DEST="PDU-TRIGGERING">/System/EthCluster/Channel/PT_{n}_Secured'
                   f'</PDU-TRIGGERING-REF></SOCKET-CONNECTION-IPDU-IDENTIFIER>')
    cluster = ('<ETHERNET-CLUSTER><SHORT-NAME>EthCluster</SHORT-NAME><ETHERNET-CLUSTER-VARIANTS>'
               '<ETHERNET-CLUSTER-CONDITIONAL><PHYSICAL-CHANNELS><ETHERNET-PHYSICAL-CHANNEL>'
               '<SHORT-NAME>Channel</SHORT-NAME>'
               '<NETWORK-ENDPOINTS><NETWORK-ENDPOINT><SHORT-NAME>Endpoint</SHORT-NAME>'
               '<NETWORK-ENDPOINT-ADDRESSES><IPV-4-CONFIGURATION>'
               f'<IPV-4-ADDRESS>{address}</IPV-4-ADDRESS><IPV-4-ADDRESS-SOURCE>FIXED</IPV-4-ADDRESS-SOURCE>'
               '</IPV-4-CONFIGURATION></NETWORK-ENDPOINT-ADDRESSES></NETWORK-ENDPOINT></NETWORK-ENDPOINTS>'
               f'<PDU-TRIGGERINGS>{triggerings}</PDU-TRIGGERINGS>'
               '<SO-AD-CONFIG><CONNECTION-BUNDLES><SOCKET-CONNECTION-BUNDLE><SHORT-NAME>Bundle</SHORT-NAME>'
               '<BUNDLED-CONNECTIONS><SOCKET-CONNECTION><PDUS>'
               f'{idents}'
               '</PDUS></SOCKET-CONNECTION></BUNDLED-CONNECTIONS></SOCKET-CONNECTION-BUNDLE></CONNECTION-BUNDLES>'
               '</SO-AD-CONFIG></ETHERNET-PHYSICAL-CHANNEL></PHYSICAL-CHANNELS></ETHERNET-CLUSTER-CONDITIONAL>'
               '</ETHERNET-CLUSTER-VARIANTS></ETHERNET-CLUSTER>')
    return ('<AR-PACKAGE><SHORT-NAME>System</SHORT-NAME><ELEMENTS>' + cluster + '</ELEMENTS>'
            '<AR-PACKAGES><AR-PACKAGE><SHORT-NAME>Pdus</SHORT-NAME><ELEMENTS>' + elements
            + '</ELEMENTS></AR-PACKAGE></AR-PACKAGES></AR-PACKAGE>')


DEPLOYMENT = (
    '<SOMEIP-SERVICE-INTERFACE-DEPLOYMENT><SHORT-NAME>Echo_Someip</SHORT-NAME>'
    '<SERVICE-INTERFACE-ID>4660</SERVICE-INTERFACE-ID>'
    '<SERVICE-INTERFACE-VERSION><MAJOR-VERSION>1</MAJOR-VERSION><MINOR-VERSION>0</MINOR-VERSION>'
    '</SERVICE-INTERFACE-VERSION>'
    '<EVENT-DEPLOYMENTS><SOMEIP-EVENT-DEPLOYMENT><SHORT-NAME>Tick</SHORT-NAME><EVENT-ID>1</EVENT-ID>'
    '<TRANSPORT-PROTOCOL>UDP</TRANSPORT-PROTOCOL></SOMEIP-EVENT-DEPLOYMENT></EVENT-DEPLOYMENTS>'
    '<METHOD-DEPLOYMENTS><SOMEIP-METHOD-DEPLOYMENT><SHORT-NAME>Echo</SHORT-NAME><METHOD-ID>1</METHOD-ID>'
    '<TRANSPORT-PROTOCOL>UDP</TRANSPORT-PROTOCOL></SOMEIP-METHOD-DEPLOYMENT></METHOD-DEPLOYMENTS>'
    '<EVENT-GROUPS><SOMEIP-EVENT-GROUP><SHORT-NAME>Ticks</SHORT-NAME><EVENT-GROUP-ID>1</EVENT-GROUP-ID>'
    '<EVENT-REFS><EVENT-REF DEST="SOMEIP-EVENT-DEPLOYMENT">/Deployments/Echo_Someip/Tick</EVENT-REF></EVENT-REFS>'
    '</SOMEIP-EVENT-GROUP></EVENT-GROUPS>'
    '</SOMEIP-SERVICE-INTERFACE-DEPLOYMENT>')


def document(role):
    server = role == "server"
    addr = "10.77.0.1" if server else "10.77.0.2"
    if server:
        pdus = [("EchoResponse", 0x12340001, "Tx", 258), ("TickEvent", 0x12348001, "Tx", 259),
                ("EchoRequest", 0x12340001, "Rx", 257)]
    else:
        pdus = [("EchoRequest", 0x12340001, "Tx", 257), ("EchoResponse", 0x12340001, "Rx", 258),
                ("TickEvent", 0x12348001, "Rx", 259)]
    secoc = ""
    for direction in ("Tx", "Rx"):
        for name, _, d, data_id in pdus:
            if d == direction:
                secoc += secoc_pdu(d, name, data_id, attempts=2 if d == "Rx" else None)
    general = container("SecOCGeneral", f"{ECUC}/SecOC/SecOCGeneral",
                        params=num(f"{ECUC}/SecOC/SecOCGeneral/SecOCMainFunctionPeriodRx", 1))
    ecuc = module("SecOC", general + secoc) + csm() + ecuc_pdus([p[0] for p in pdus])
    if server:
        instance = ('<PROVIDED-SOMEIP-SERVICE-INSTANCE><SHORT-NAME>EchoServer</SHORT-NAME>'
                    '<SERVICE-INTERFACE-DEPLOYMENT-REF DEST="SOMEIP-SERVICE-INTERFACE-DEPLOYMENT">'
                    '/Deployments/Echo_Someip</SERVICE-INTERFACE-DEPLOYMENT-REF>'
                    '<PROVIDED-EVENT-GROUPS><SOMEIP-PROVIDED-EVENT-GROUP><SHORT-NAME>ProvidedTicks</SHORT-NAME>'
                    '<EVENT-GROUP-REF DEST="SOMEIP-EVENT-GROUP">/Deployments/Echo_Someip/Ticks</EVENT-GROUP-REF>'
                    '<MULTICAST-THRESHOLD>0</MULTICAST-THRESHOLD>'
                    '</SOMEIP-PROVIDED-EVENT-GROUP></PROVIDED-EVENT-GROUPS>'
                    '<SERVICE-INSTANCE-ID>1</SERVICE-INSTANCE-ID></PROVIDED-SOMEIP-SERVICE-INSTANCE>')
        inst_name, port = "EchoServer", 30509
        endpoint = ('<NETWORK-ENDPOINT-REFS><NETWORK-ENDPOINT-REF DEST="NETWORK-ENDPOINT">'
                    '/System/EthCluster/Channel/Endpoint</NETWORK-ENDPOINT-REF></NETWORK-ENDPOINT-REFS>')
    else:
        instance = ('<REQUIRED-SOMEIP-SERVICE-INSTANCE><SHORT-NAME>EchoClient</SHORT-NAME>'
                    '<SERVICE-INTERFACE-DEPLOYMENT-REF DEST="SOMEIP-SERVICE-INTERFACE-DEPLOYMENT">'
                    '/Deployments/Echo_Someip</SERVICE-INTERFACE-DEPLOYMENT-REF>'
                    '<REQUIRED-EVENT-GROUPS><SOMEIP-REQUIRED-EVENT-GROUP><SHORT-NAME>RequiredTicks</SHORT-NAME>'
                    '<EVENT-GROUP-REF DEST="SOMEIP-EVENT-GROUP">/Deployments/Echo_Someip/Ticks</EVENT-GROUP-REF>'
                    '</SOMEIP-REQUIRED-EVENT-GROUP></REQUIRED-EVENT-GROUPS>'
                    '<REQUIRED-SERVICE-INSTANCE-ID>1</REQUIRED-SERVICE-INSTANCE-ID>'
                    '</REQUIRED-SOMEIP-SERVICE-INSTANCE>')
        inst_name, port = "EchoClient", 30501
        endpoint = ('<UNICAST-NETWORK-ENDPOINT-REF DEST="NETWORK-ENDPOINT">/System/EthCluster/Channel/Endpoint'
                    '</UNICAST-NETWORK-ENDPOINT-REF>')
    machine = "SecuredServer" if server else "SecuredClient"
    kind = "PROVIDED-SOMEIP-SERVICE-INSTANCE" if server else "REQUIRED-SOMEIP-SERVICE-INSTANCE"
    manifest = (
        '<AR-PACKAGE><SHORT-NAME>Deployments</SHORT-NAME><ELEMENTS>' + DEPLOYMENT + '</ELEMENTS></AR-PACKAGE>'
        '<AR-PACKAGE><SHORT-NAME>Instances</SHORT-NAME><ELEMENTS>' + instance
        + '<SOMEIP-SERVICE-INSTANCE-TO-MACHINE-MAPPING><SHORT-NAME>Mapping</SHORT-NAME>'
        f'<COMMUNICATION-CONNECTOR-REF DEST="ETHERNET-COMMUNICATION-CONNECTOR">/Machines/{machine}/Eth0'
        '</COMMUNICATION-CONNECTOR-REF><SERVICE-INSTANCE-REFS>'
        f'<SERVICE-INSTANCE-REF DEST="{kind}">/Instances/{inst_name}</SERVICE-INSTANCE-REF>'
        f'</SERVICE-INSTANCE-REFS><UDP-PORT>{port}</UDP-PORT></SOMEIP-SERVICE-INSTANCE-TO-MACHINE-MAPPING>'
        '</ELEMENTS></AR-PACKAGE>'
        '<AR-PACKAGE><SHORT-NAME>Machines</SHORT-NAME><ELEMENTS>'
        f'<MACHINE-DESIGN><SHORT-NAME>{machine}</SHORT-NAME><COMMUNICATION-CONNECTORS>'
        f'<ETHERNET-COMMUNICATION-CONNECTOR><SHORT-NAME>Eth0</SHORT-NAME>{endpoint}'
        '</ETHERNET-COMMUNICATION-CONNECTOR></COMMUNICATION-CONNECTORS></MACHINE-DESIGN>'
        '</ELEMENTS></AR-PACKAGE>')
    body = ('<AR-PACKAGE><SHORT-NAME>ActiveEcuC</SHORT-NAME><ELEMENTS>' + ecuc + '</ELEMENTS></AR-PACKAGE>'
            + system([(p[0], p[1]) for p in pdus], addr) + manifest)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<AUTOSAR xmlns="http://autosar.org/schema/r4.0" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
            f'<AR-PACKAGES>{body}</AR-PACKAGES>\n</AUTOSAR>\n')


def pretty(text):
    import xml.dom.minidom
    return xml.dom.minidom.parseString(text.encode()).toprettyxml(indent="  ", encoding="UTF-8").decode()


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "testdata/arxml"
    os.makedirs(out, exist_ok=True)
    for role in ("server", "client"):
        path = os.path.join(out, f"echo_{role}.arxml")
        with open(path, "w") as f:
            f.write(pretty(document(role)))
        print("wrote", path)
