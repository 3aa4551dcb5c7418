/// ISO 3166-1 country codes: files write the three-letter form (IPTC-IIM's Country code is
/// alpha-3; XMP's CountryCode either), the gazetteer the two-letter one; places are grouped
/// by the two-letter code, so a file's `PRT` and GeoNames' `PT` are one country. The table is
/// Debian's iso-codes 4.15 (`iso_3166-1.json`), 249 countries.
public enum CountryCodes {
    /// `alpha3 + alpha2` pairs, sorted by alpha-3, five letters and a space each.
    static let table: String =
        "ABWAW AFGAF AGOAO AIAAI ALAAX ALBAL ANDAD AREAE ARGAR ARMAM ASMAS ATAAQ ATFTF ATGAG AUSAU AUTAT " +
        "AZEAZ BDIBI BELBE BENBJ BESBQ BFABF BGDBD BGRBG BHRBH BHSBS BIHBA BLMBL BLRBY BLZBZ BMUBM BOLBO " +
        "BRABR BRBBB BRNBN BTNBT BVTBV BWABW CAFCF CANCA CCKCC CHECH CHLCL CHNCN CIVCI CMRCM CODCD COGCG " +
        "COKCK COLCO COMKM CPVCV CRICR CUBCU CUWCW CXRCX CYMKY CYPCY CZECZ DEUDE DJIDJ DMADM DNKDK DOMDO " +
        "DZADZ ECUEC EGYEG ERIER ESHEH ESPES ESTEE ETHET FINFI FJIFJ FLKFK FRAFR FROFO FSMFM GABGA GBRGB " +
        "GEOGE GGYGG GHAGH GIBGI GINGN GLPGP GMBGM GNBGW GNQGQ GRCGR GRDGD GRLGL GTMGT GUFGF GUMGU GUYGY " +
        "HKGHK HMDHM HNDHN HRVHR HTIHT HUNHU IDNID IMNIM INDIN IOTIO IRLIE IRNIR IRQIQ ISLIS ISRIL ITAIT " +
        "JAMJM JEYJE JORJO JPNJP KAZKZ KENKE KGZKG KHMKH KIRKI KNAKN KORKR KWTKW LAOLA LBNLB LBRLR LBYLY " +
        "LCALC LIELI LKALK LSOLS LTULT LUXLU LVALV MACMO MAFMF MARMA MCOMC MDAMD MDGMG MDVMV MEXMX MHLMH " +
        "MKDMK MLIML MLTMT MMRMM MNEME MNGMN MNPMP MOZMZ MRTMR MSRMS MTQMQ MUSMU MWIMW MYSMY MYTYT NAMNA " +
        "NCLNC NERNE NFKNF NGANG NICNI NIUNU NLDNL NORNO NPLNP NRUNR NZLNZ OMNOM PAKPK PANPA PCNPN PERPE " +
        "PHLPH PLWPW PNGPG POLPL PRIPR PRKKP PRTPT PRYPY PSEPS PYFPF QATQA REURE ROURO RUSRU RWARW SAUSA " +
        "SDNSD SENSN SGPSG SGSGS SHNSH SJMSJ SLBSB SLESL SLVSV SMRSM SOMSO SPMPM SRBRS SSDSS STPST SURSR " +
        "SVKSK SVNSI SWESE SWZSZ SXMSX SYCSC SYRSY TCATC TCDTD TGOTG THATH TJKTJ TKLTK TKMTM TLSTL TONTO " +
        "TTOTT TUNTN TURTR TUVTV TWNTW TZATZ UGAUG UKRUA UMIUM URYUY USAUS UZBUZ VATVA VCTVC VENVE VGBVG " +
        "VIRVI VNMVN VUTVU WLFWF WSMWS YEMYE ZAFZA ZMBZM ZWEZW "

    static let byAlpha3: [String: String] = {
        var map: [String: String] = [:]
        for pair in table.split(separator: " ") where pair.count == 5 {
            map[String(pair.prefix(3))] = String(pair.suffix(2))
        }
        return map
    }()

    static let alpha2s = Set(byAlpha3.values)

    /// The two-letter code for a code a file gives (either form, any case, trimmed); nil for
    /// anything else (a country's name in the code field, `XX`).
    public static func alpha2(_ code: String) -> String? {
        let c = String(code.filter { !$0.isWhitespace }).uppercased()
        switch c.count {
        case 2: return alpha2s.contains(c) ? c : nil
        case 3: return byAlpha3[c]
        default: return nil
        }
    }
}
